package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fakeWorker is the fake agent handed one task by runtasks run --workers
// (RUNTASKS_TASK, in RUNTASKS_WORKTREE): it checks with bd that the task's
// blockers are closed, works FAKEAGENT_SLEEP, commits a file on its branch,
// merges the branch into the main work tree and closes the task. Into
// FAKEAGENT_TRACE it writes "start ID", "end ID" lines, "peak N" (the most
// tasks it saw worked at once on this machine while it worked) and
// "VIOLATION …" for a task started before its blockers were closed. The task named by FAKEAGENT_FAILMERGE
// fails its first merge: the agent says so and does not close it. The
// task named by FAKEAGENT_CHECKPOINT ends its first run at a context
// checkpoint, before the merge. The agent of the task named by
// FAKEAGENT_CRASH crashes (exit 2) every time. FAKEAGENT_AFTER_CLOSE is
// how long the agent stays after its bd close.
// With FAKEAGENT_SHARED set every task also
// writes its id into shared.txt (the FAKEAGENT_STUBBORN one always), so
// concurrent tasks conflict; a conflict
// runtasks left in the worktree is resolved ("resolved ID"), except by the
// task named by FAKEAGENT_STUBBORN, which aborts it and, before each of its
// merges, moves the base (a conflicting shared.txt committed there).
// FAKEAGENT_PEERS=N: a task waits (up to 30 s) until N tasks are at work,
// unless a task has ended.
func fakeWorker(assistant func(...map[string]any), toolResult func(string, string, bool), result func(string, string, bool)) int {
	id, wt := os.Getenv("RUNTASKS_TASK"), os.Getenv("RUNTASKS_WORKTREE")
	trace := os.Getenv("FAKEAGENT_TRACE")
	if id == "" || wt == "" || trace == "" {
		result("error_during_execution", "fakeworker: RUNTASKS_TASK, RUNTASKS_WORKTREE or FAKEAGENT_TRACE unset", true)
		return 1
	}
	logf := func(format string, args ...any) {
		f, err := os.OpenFile(trace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			fmt.Fprintf(f, format+"\n", args...)
			f.Close()
		}
	}
	if wd, _ := os.Getwd(); wd != wt {
		logf("VIOLATION %s: runs in %s, not its worktree %s", id, wd, wt)
	}
	running := trace + ".running"
	os.MkdirAll(running, 0o755)
	os.WriteFile(filepath.Join(running, id), nil, 0o644)
	// peak is the most tasks seen at work at once while this one works.
	peak := 0
	observe := func() {
		if ents, _ := os.ReadDir(running); len(ents) > peak {
			peak = len(ents)
		}
	}
	observe()
	defer func() { logf("peak %d", peak) }()
	defer os.Remove(filepath.Join(running, id))
	logf("start %s", id)
	if os.Getenv("FAKEAGENT_CRASH") == id {
		logf("crash %s", id)
		fmt.Fprintln(os.Stderr, "fakeworker: crashed on "+id)
		return 2
	}

	assistant(map[string]any{"type": "tool_use", "id": "toolu_show", "name": "Bash",
		"input": map[string]any{"command": "bd show " + id + " --json", "description": "Read the task"}})
	out, err := exec.Command("bd", "show", id, "--json").Output()
	if err != nil {
		toolResult("toolu_show", err.Error(), true)
		result("error_during_execution", "bd show failed", true)
		return 1
	}
	toolResult("toolu_show", "ok", false)
	var shown []struct {
		Status       string `json:"status"`
		Assignee     string `json:"assignee"`
		Dependencies []struct {
			ID     string `json:"id"`
			Type   string `json:"dependency_type"`
			Status string `json:"status"`
		} `json:"dependencies"`
	}
	_ = json.Unmarshal(out, &shown)
	if len(shown) != 1 || shown[0].Status != "in_progress" || shown[0].Assignee != os.Getenv("BEADS_ACTOR") {
		logf("VIOLATION %s: not held by this worker: %s", id, strings.TrimSpace(string(out)))
	}
	for _, d := range shown[0].Dependencies {
		if d.Type == "blocks" && d.Status != "closed" {
			logf("VIOLATION %s started before its blocker %s closed (%s)", id, d.ID, d.Status)
		}
	}
	if n, err := strconv.Atoi(os.Getenv("FAKEAGENT_PEERS")); err == nil {
		ended := func() bool { b, _ := os.ReadFile(trace); return strings.Contains(string(b), "\nend ") }
		for end := time.Now().Add(30 * time.Second); peak < n && !ended() && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			observe()
		}
	}
	if d, err := time.ParseDuration(os.Getenv("FAKEAGENT_SLEEP")); err == nil {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			observe()
		}
	}
	git := func(dir string, args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		return string(out), err
	}
	common, err := git(wt, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		result("error_during_execution", "git: "+common, true)
		return 1
	}
	root := filepath.Dir(strings.TrimSpace(common))
	stubborn := os.Getenv("FAKEAGENT_STUBBORN") == id
	if out, _ := git(wt, "diff", "--name-only", "--diff-filter=U"); strings.TrimSpace(out) != "" {
		if stubborn {
			git(wt, "merge", "--abort")
			logf("abort %s", id)
		} else {
			for _, f := range strings.Fields(out) {
				os.WriteFile(filepath.Join(wt, f), []byte("resolved by "+id+"\n"), 0o644)
				git(wt, "add", f)
			}
			if out, err := git(wt, "commit", "-q", "--no-edit"); err != nil {
				result("error_during_execution", "git commit: "+out, true)
				return 1
			}
			logf("resolved %s", id)
		}
	}
	os.WriteFile(filepath.Join(wt, "done-"+id+".txt"), []byte(id+"\n"), 0o644)
	if os.Getenv("FAKEAGENT_SHARED") != "" || stubborn {
		os.WriteFile(filepath.Join(wt, "shared.txt"), []byte(id+"\n"), 0o644)
	}
	if out, err := git(wt, "add", "-A"); err != nil {
		result("error_during_execution", "git add: "+out, true)
		return 1
	}
	if out, err := git(wt, "commit", "-qm", "work on "+id); err != nil && !strings.Contains(out, "nothing to commit") {
		result("error_during_execution", "git commit: "+out, true)
		return 1
	}
	if os.Getenv("FAKEAGENT_CHECKPOINT") == id {
		marker := trace + ".checkpoint-" + id
		if _, err := os.Stat(marker); err != nil {
			// The context runs out before the merge: the work is committed
			// on the branch, the task is not closed.
			os.WriteFile(marker, nil, 0o644)
			logf("checkpoint %s", id)
			text := "My context is nearly full; the work on " + id + " is committed on its branch.\n<promise>CONTEXT LIMIT - CHECKPOINT</promise>"
			assistant(map[string]any{"type": "text", "text": text})
			result("success", text, false)
			return 0
		}
	}
	if fail := os.Getenv("FAKEAGENT_FAILMERGE"); fail == id {
		marker := trace + ".failed-" + id
		if _, err := os.Stat(marker); err != nil {
			os.WriteFile(marker, nil, 0o644)
			logf("mergefail %s", id)
			text := "The merge of agent/" + id + " failed: CONFLICT in done.txt. I did not close " + id + "."
			assistant(map[string]any{"type": "text", "text": text})
			result("success", text, false)
			return 0
		}
	}
	// FAKEAGENT_HOOKS: the merge is first put to runtasks' pre-tool hook, as
	// a client with it installed does. A denied merge makes its check pass
	// (commits checked-ID on the branch) and asks again.
	for try := 0; os.Getenv("FAKEAGENT_HOOKS") != ""; try++ {
		in, _ := json.Marshal(map[string]any{"session_id": "fw-" + id, "cwd": wt, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": "git -C " + root + " merge --no-edit agent/" + id}})
		hook := exec.Command("runtasks", "pre-tool-hook", "--agent", "claude")
		hook.Stdin = strings.NewReader(string(in))
		if out, _ := hook.Output(); !strings.Contains(string(out), `"permissionDecision":"deny"`) {
			break
		} else if logf("denied %s", id); try > 0 {
			result("success", "my merge was denied twice: "+string(out), false)
			return 0
		}
		os.WriteFile(filepath.Join(wt, "checked-"+id), nil, 0o644)
		git(wt, "add", "checked-"+id)
		git(wt, "commit", "-qm", "checked "+id)
	}
	assistant(map[string]any{"type": "tool_use", "id": "toolu_merge", "name": "Bash",
		"input": map[string]any{"command": "git -C " + root + " merge agent/" + id, "description": "Merge"}})
	// Other workers merge into the same work tree: one merge at a time (a
	// lock next to the repository's .git), and git's own index lock is
	// waited out too.
	lock, err := os.OpenFile(filepath.Join(root, ".git", "fakeworker-merge.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		result("error_during_execution", "merge lock: "+err.Error(), true)
		return 1
	}
	defer lock.Close()
	syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
	if stubborn {
		os.WriteFile(filepath.Join(root, "shared.txt"), []byte(time.Now().String()+"\n"), 0o644)
		git(root, "add", "shared.txt")
		git(root, "commit", "-qm", "the base moves under "+id)
	}
	for try := 0; ; try++ {
		out, err := git(root, "merge", "--no-edit", "agent/"+id)
		if err == nil {
			break
		}
		if try > 100 || !strings.Contains(out, ".lock") {
			toolResult("toolu_merge", out, true)
			logf("mergeerror %s: %s", id, out)
			git(root, "merge", "--abort")
			text := "The merge failed: " + out
			assistant(map[string]any{"type": "text", "text": text})
			result("success", text, false)
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	toolResult("toolu_merge", "merged", false)
	out, err = exec.Command("bd", "close", id, "--reason", "merged by fakeworker", "--json").CombinedOutput()
	if err != nil {
		result("error_during_execution", "bd close failed: "+string(out), true)
		return 1
	}
	logf("end %s", id)
	text := "Merged and closed " + id + "."
	assistant(map[string]any{"type": "text", "text": text})
	if d, err := time.ParseDuration(os.Getenv("FAKEAGENT_AFTER_CLOSE")); err == nil {
		time.Sleep(d) // lease renewals meet the closed task
		logf("exit %s", id)
	}
	result("success", text, false)
	return 0
}
