package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// The life-cycle tests run the real Claude Code CLI in the user's world: a
// plain git repository with its own .gitignore and a first commit, the
// hooks installed by `runtasks install claude` (into the project, or
// globally under a temporary HOME), sessions armed by typing
// `/run-tasks <epic>`, and a scripted model that works through Claude
// Code's Bash tool with the real bd and the real runtasks binary.

// userWorld is one user's machine: a HOME, a repository holding a real
// beads store, the runtasks binary and the environment every program gets.
type userWorld struct {
	s        *beadstest.Store
	root     string // the repository (its main work tree)
	runtasks string // the runtasks binary built for this test
	claude   string // the pinned Claude Code CLI
	home     string
	env      []string
	// logs keeps what a failure needs: runtasks' log, Claude Code's debug
	// log, each session's stream-json output.
	logs string
}

// newUserWorld makes the user's repository: git init, a real bd store
// (bd's own stealth mode keeps .beads out of git), the user's .gitignore
// (nothing of runtasks' in it) and a first commit.
func newUserWorld(t *testing.T, prefix string) *userWorld {
	t.Helper()
	w := &userWorld{claude: cli(t, "claude")}
	w.runtasks = buildRuntasks(t)
	w.s = beadstest.NewStore(t, prefix)
	w.root = w.s.Root
	base := t.TempDir()
	w.home = filepath.Join(base, "home")
	tmp := filepath.Join(base, "tmp")
	w.logs = filepath.Join(base, "logs")
	for _, d := range []string{w.home, tmp, w.logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := strings.Join([]string{filepath.Dir(w.s.Bin), filepath.Dir(w.runtasks), filepath.Dir(w.claude), os.Getenv("PATH")}, string(os.PathListSeparator))
	// Nothing of the machine running the tests leaks in: not its Claude
	// Code session (CLAUDE_*), its runtasks settings or its API keys.
	var env []string
	for _, e := range w.s.Env {
		name, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(name, "CLAUDE") || strings.HasPrefix(name, "RUNTASKS_") ||
			strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "XDG_") || name == "TASKMASTER_MAX" {
			continue
		}
		env = append(env, e)
	}
	w.env = setEnv(env, "HOME="+w.home, "TMPDIR="+tmp, "PATH="+path,
		"XDG_CONFIG_HOME="+filepath.Join(w.home, ".config"), "XDG_STATE_HOME="+filepath.Join(w.home, ".local", "state"),
		"RUNTASKS_LOG_FILE="+filepath.Join(w.logs, "runtasks.log"), "RUNTASKS_LOG_LEVEL=info")
	w.writeFile(t, ".gitignore", "node_modules/\n*.log\n")
	w.writeFile(t, "README.md", "# parser\n")
	w.git(t, w.root, "add", ".gitignore", "README.md")
	w.git(t, w.root, "commit", "-qm", "init")
	w.mustBeClean(t, "the fresh repository")
	t.Cleanup(func() { w.keepLogs(t) })
	return w
}

func (w *userWorld) writeFile(t *testing.T, rel, content string) {
	t.Helper()
	path := filepath.Join(w.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git in dir with the world's environment.
func (w *userWorld) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, err := w.exec(dir, nil, "git", args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (w *userWorld) mustBeClean(t *testing.T, what string) {
	t.Helper()
	if out := w.git(t, w.root, "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Fatalf("%s is not clean:\n%s", what, out)
	}
}

// exec runs bin in dir with the world's environment plus extra.
func (w *userWorld) exec(dir string, extra []string, bin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = setEnv(w.env, extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", runLimit, err)
	}
	return out.String(), errb.String(), err
}

// rt runs runtasks in the repository; a failure fails the test.
func (w *userWorld) rt(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := w.exec(w.root, nil, w.runtasks, args...)
	if err != nil {
		t.Fatalf("runtasks %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// keepLogs copies the logs of a failed test (or of every test, with
// E2E_LOG_DIR set) out of the temporary directories and prints the tail
// of runtasks' log.
func (w *userWorld) keepLogs(t *testing.T) {
	if !t.Failed() && os.Getenv("E2E_LOG_DIR") == "" {
		return
	}
	if b, err := os.ReadFile(filepath.Join(w.logs, "runtasks.log")); err == nil {
		t.Logf("runtasks log (hooks and commands):\n%s", tail(string(b), 6000))
	}
	for _, rel := range []string{".runtasks/decisions.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(w.root, rel)); err == nil {
			t.Logf("%s:\n%s", rel, tail(string(b), 4000))
		}
	}
	dir, err := os.MkdirTemp(os.Getenv("E2E_LOG_DIR"), "runtasks-e2e-"+strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Logf("keep logs: %v", err)
		return
	}
	if err := os.CopyFS(dir, os.DirFS(w.logs)); err != nil {
		t.Logf("keep logs: %v", err)
	}
	t.Logf("logs (runtasks, Claude Code debug, stream-json, model requests) kept in %s", dir)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// steps is a scripted model: the n-th main request gets steps[n-1]; a
// request past the end gets a text that names the overrun (the test then
// fails on the request count).
func steps(replies ...Reply) Script {
	return func(n int, _ *Request) Reply {
		if n <= len(replies) {
			return replies[n-1]
		}
		return Reply{Text: fmt.Sprintf("(script overrun: request %d, %d scripted)", n, len(replies))}
	}
}

// claudeRun is one `claude -p` session and what it left.
type claudeRun struct {
	name   string
	srv    *Server
	out    string // stream-json
	errOut string
	events []map[string]any
	// Session is the session id Claude Code reported (system/init).
	Session string
	// Result is the final result event.
	Result struct {
		Subtype string `json:"subtype"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
}

// claudeSession runs one Claude Code session in dir with the prompt typed
// by the user and the scripted model; extra is added to its environment.
func (w *userWorld) claudeSession(t *testing.T, name, dir, prompt string, script Script, extra ...string) *claudeRun {
	t.Helper()
	r := &claudeRun{name: name, srv: NewAnthropic(t, script)}
	t.Cleanup(func() { w.keepRequests(t, r) })
	env := []string{
		"ANTHROPIC_BASE_URL=" + r.srv.URL, "ANTHROPIC_API_KEY=dummy-e2e-key",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	env = append(env, extra...)
	start := time.Now()
	out, errOut, err := w.exec(dir, env, w.claude, "-p", prompt,
		"--output-format", "stream-json", "--verbose", "--allowedTools", "Bash",
		"--debug-file", filepath.Join(w.logs, name+"-claude-debug.log"))
	t.Logf("%s: claude -p took %s, %d model requests", name, time.Since(start).Round(time.Millisecond), len(r.srv.Main()))
	r.out, r.errOut = out, errOut
	_ = os.WriteFile(filepath.Join(w.logs, name+"-stream.jsonl"), []byte(out+"\n--- stderr\n"+errOut), 0o644)
	if err != nil {
		t.Fatalf("%s: claude -p: %v\nstdout:\n%s\nstderr:\n%s", name, err, tail(out, 8000), errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		r.events = append(r.events, ev)
		if ev["type"] == "system" && ev["subtype"] == "init" {
			r.Session, _ = ev["session_id"].(string)
		}
		if ev["type"] == "result" {
			_ = json.Unmarshal([]byte(line), &r.Result)
		}
	}
	if r.Session == "" {
		t.Fatalf("%s: no system/init event with a session id:\n%s", name, tail(out, 4000))
	}
	return r
}

// keepRequests writes what the fake model received, one tail per main
// request, next to the other logs.
func (w *userWorld) keepRequests(t *testing.T, r *claudeRun) {
	var b strings.Builder
	for _, req := range r.srv.Main() {
		fmt.Fprintf(&b, "=== request %d\n--- what reached the model since it last spoke:\n%s\n--- it answered: %+v\n\n", req.N, req.Tail, req.Reply)
	}
	_ = os.WriteFile(filepath.Join(w.logs, r.name+"-model-requests.txt"), []byte(b.String()), 0o644)
}

// requests fails the test unless the session made exactly n main requests,
// logging what reached the model at each.
func (r *claudeRun) requests(t *testing.T, n int, why string) []*Request {
	t.Helper()
	reqs := r.srv.Main()
	if len(reqs) != n {
		for _, q := range reqs {
			t.Logf("%s request %d tail: %.600s\n  answered: %+v", r.name, q.N, q.Tail, q.Reply)
		}
		// A failed Bash command is the usual first cause: name each.
		for _, q := range reqs {
			results, _ := toolResults(q.Tail)
			for _, b := range results {
				if b.IsError && q.N > 1 {
					t.Errorf("%s: the Bash command of request %d (%+v) failed: %s", r.name, q.N-1, reqs[q.N-2].Reply, b.Content)
				}
			}
		}
		t.Fatalf("%s: model requests = %d, want %d (%s)\nresult: %+v", r.name, len(reqs), n, why, r.Result)
	}
	return reqs
}

// has reports a failure for every sub missing from what reached the model
// in request n.
func (r *claudeRun) has(t *testing.T, n int, what string, subs ...string) {
	t.Helper()
	tail := r.srv.Main()[n-1].Tail
	for _, sub := range subs {
		if !strings.Contains(tail, sub) {
			t.Errorf("%s request %d (%s): what reached the model lacks %q; it was:\n%.1500s", r.name, n, what, sub, tail)
		}
	}
}

// toolResults returns the tool results in a request's tail.
func toolResults(tail string) (results []toolResult, ok bool) {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal([]byte(tail), &msgs); err != nil {
		return nil, false
	}
	for _, m := range msgs {
		var blocks []toolResult
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				results = append(results, b)
			}
		}
	}
	return results, true
}

type toolResult struct {
	Type    string          `json:"type"`
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// toolOK fails the test when the tool result that reached the model in
// request n is missing or an error (then its text is shown).
func (r *claudeRun) toolOK(t *testing.T, n int, what string) {
	t.Helper()
	tail := r.srv.Main()[n-1].Tail
	results, ok := toolResults(tail)
	if !ok {
		t.Fatalf("%s request %d: tail is not a message list:\n%.1500s", r.name, n, tail)
	}
	if len(results) == 0 {
		t.Errorf("%s request %d (%s): no tool result reached the model:\n%.1500s", r.name, n, what, tail)
	}
	for _, b := range results {
		if b.IsError {
			t.Errorf("%s request %d (%s): the Bash command failed: %s", r.name, n, what, b.Content)
		}
	}
}

func (r *claudeRun) hasNot(t *testing.T, n int, what string, subs ...string) {
	t.Helper()
	tail := r.srv.Main()[n-1].Tail
	for _, sub := range subs {
		if strings.Contains(tail, sub) {
			t.Errorf("%s request %d (%s): unexpected %q reached the model:\n%.1500s", r.name, n, what, sub, tail)
		}
	}
}

// notices returns what Claude Code showed the user as hooks' system
// messages (stream-json system/informational: "Stop says: …").
func (r *claudeRun) notices() []string {
	var out []string
	for _, ev := range r.events {
		if ev["type"] == "system" && ev["subtype"] == "informational" {
			if s, _ := ev["content"].(string); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// noticed fails the test unless the user was shown want.
func (r *claudeRun) noticed(t *testing.T, want string) {
	t.Helper()
	for _, n := range r.notices() {
		if strings.Contains(n, want) {
			return
		}
	}
	t.Errorf("%s: the user was not shown %q; hook messages shown: %q", r.name, want, r.notices())
}

// stopDecisions is runtasks' own record of a session's Stop decisions
// (runtasks status --json), one "outcome block=B why" line each.
func (w *userWorld) stopDecisions(t *testing.T, session string) []string {
	t.Helper()
	out := w.rt(t, "status", "--session", session, "--history", "-1", "--json")
	var st struct {
		History []struct {
			Event   string `json:"event"`
			Outcome string `json:"outcome"`
			Block   bool   `json:"block"`
			Why     string `json:"why"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("runtasks status --json: %v\n%s", err, out)
	}
	var got []string
	for _, h := range st.History {
		if h.Event == "Stop" {
			got = append(got, fmt.Sprintf("%s block=%v %s", h.Outcome, h.Block, h.Why))
		}
	}
	return got
}

func wantLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// issue is what the tests read from bd show.
type issue struct {
	Status   string `json:"status"`
	Assignee string `json:"assignee"`
}

func (w *userWorld) issue(t *testing.T, id string) issue {
	t.Helper()
	out := w.s.BD("show", id, "--json")
	var list []issue
	if err := json.Unmarshal([]byte(out), &list); err == nil && len(list) == 1 {
		return list[0]
	}
	var one issue
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatalf("bd show %s --json: %v\n%s", id, err, out)
	}
	return one
}

// markers lists the files named one of names anywhere under dir.
func markers(dir string, names ...string) []string {
	var found []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		for _, n := range names {
			if d.Name() == n {
				found = append(found, path)
			}
		}
		return nil
	})
	return found
}

// TestIntegrationE2EClaudeLifeCycle: one epic, two tasks, two Claude Code
// sessions, each armed by typing /run-tasks <epic>. The first claims a task
// with `runtasks claim` from its Bash tool (the session comes from
// CLAUDE_ENV_FILE), works it in a linked worktree, stops there once (and is
// sent back to work), merges, closes the task and checkpoints; the second
// claims and finishes the other task and the epic is complete.
func TestIntegrationE2EClaudeLifeCycle(t *testing.T) {
	w := newUserWorld(t, "lc")
	epic := w.s.Create("Ship the parser", "--type", "epic")
	t1 := w.s.Create("Write the parser", "--parent", epic, "--priority", "1")
	t2 := w.s.Create("Test the parser", "--parent", epic, "--priority", "2")

	// The user installs the hooks and skills into the project and commits
	// them, as a team would; nothing is excluded by hand.
	t.Logf("runtasks install claude:\n%s", w.rt(t, "install", "claude"))
	w.git(t, w.root, "add", "-A")
	w.git(t, w.root, "commit", "-qm", "runtasks: hooks and skills")
	w.mustBeClean(t, "the repository after install")

	promptLine := firstLine(t, w.rt(t, "prompt", "--epic", epic))
	wt1 := filepath.Join(w.root, ".worktrees", "agent-"+t1)

	// ---- Session 1: claim, worktree, commit, a stop inside the worktree,
	// merge, close, checkpoint.
	s1 := w.claudeSession(t, "session1", w.root, "/run-tasks "+epic, steps(
		/* 1 */ Reply{Shell: "runtasks claim " + t1},
		/* 2 */ Reply{Shell: fmt.Sprintf("git worktree add -q .worktrees/agent-%s -b agent/%s && cd .worktrees/agent-%s && pwd", t1, t1, t1)},
		/* 3 */ Reply{Shell: "printf 'package parser\\n\\n// Parse parses.\\nfunc Parse() {}\\n' > parser.go && git add parser.go && git commit -qm 'Write the parser' && git log --oneline -1"},
		/* 4 */ Reply{Text: "Committed " + t1 + " on agent/" + t1 + " in its worktree. Merging it next."},
		/* 5 */ Reply{Shell: fmt.Sprintf("cd %s && git merge -q --no-edit agent/%s && git worktree remove .worktrees/agent-%s && "+
			"for f in runs/run-*-%s/RESULTS.md; do printf '# Results\\nParse written in its worktree, merged.\\n' > \"$f\"; done && "+
			"bd close %s --reason 'parser written, merged'", w.root, t1, t1, t1, t1)},
		/* 6 */ Reply{Text: t1 + " is merged and closed; my context is nearly full.\n<promise>CONTEXT LIMIT - CHECKPOINT</promise>"},
	))
	s1.requests(t, 6, "claim, worktree, commit, a stop in the worktree, merge and close, checkpoint")
	// 1: the typed /run-tasks armed the session (the prompt hook's context)
	// and the skill's body came with it.
	s1.has(t, 1, "the typed /run-tasks", "<command-name>/run-tasks</command-name>", "this session now drives epic "+epic, "# Run tasks")
	s1.hasNot(t, 1, "the typed /run-tasks", "Stop hook feedback")
	// 2: `runtasks claim` in the Bash tool knew its session without a flag:
	// RUNTASKS_SESSION came from CLAUDE_ENV_FILE. [waits for branch trust:
	// on main the variable makes runtasks exit "unknown variable"]
	s1.toolOK(t, 2, "runtasks claim in the Bash tool")
	s1.has(t, 2, "runtasks claim in the Bash tool", "Task claimed: "+t1, "Claimed in beads as tester@"+s1.Session)
	if is := w.issue(t, t1); is.Assignee != "tester@"+s1.Session {
		t.Errorf("%s assignee = %q, want tester@%s (the session's actor)", t1, is.Assignee, s1.Session)
	}
	// 3: the worktree exists and the Bash tool's cwd is in it.
	s1.toolOK(t, 3, "git worktree add")
	s1.has(t, 3, "git worktree add", wt1)
	// 4: the commit ran in the worktree, no stop in between.
	s1.toolOK(t, 4, "git commit in the worktree")
	s1.has(t, 4, "git commit in the worktree", "Write the parser")
	s1.hasNot(t, 4, "git commit in the worktree", "Stop hook feedback")
	// 5: the stop made inside the linked worktree was judged with the
	// project root's binding: blocked, the orchestration prompt and the
	// state line came back as a new user turn. [waits for branch trust: on
	// main the worktree is a project of its own, the session is not driven
	// there and this stop ends the session]
	s1.has(t, 5, "the stop inside the worktree", "Stop hook feedback:", promptLine, "runtasks: cycle 1/50 · 1 ready (next: "+t2+")")
	// 6: merge, RESULTS.md, bd close as the orchestration prompt says it,
	// from the session that claimed the task. [waits for a fix on no
	// branch yet: `runtasks claim` assigns the task to tester@<session>,
	// the Bash tool's bd runs as tester, and bd 1.3.0 refuses: "cannot
	// close …: assignee is "tester@<session>", actor is "tester"; reclaim or
	// use --force to override"]
	s1.toolOK(t, 6, "merge, RESULTS.md and bd close")
	s1.hasNot(t, 6, "merge and close", "Stop hook feedback")
	if !strings.Contains(s1.Result.Result, "<promise>CONTEXT LIMIT - CHECKPOINT</promise>") || s1.Result.IsError {
		t.Errorf("session 1 result = %+v, want the checkpoint promise", s1.Result)
	}
	s1.noticed(t, "Stop says: runtasks: context checkpoint accepted: work committed; resume the session to continue "+epic+".")
	wantLines(t, "session 1 Stop decisions", w.stopDecisions(t, s1.Session),
		"continue block=true work remains: 1 ready",
		"checkpoint block=false context checkpoint accepted: work committed; the session's binding to "+epic+" is released",
	)
	// runtasks' own files (.runtasks/, runs/) never dirtied the tree: the
	// checkpoint was accepted and git status is clean.
	w.mustBeClean(t, "the repository after the checkpoint")
	if is := w.issue(t, t1); is.Status != "closed" {
		t.Errorf("%s status = %q after session 1, want closed", t1, is.Status)
	}
	if is := w.issue(t, t2); is.Status != "open" {
		t.Errorf("%s status = %q after session 1, want open", t2, is.Status)
	}
	if log := w.git(t, w.root, "log", "--oneline", "-1", "--", "parser.go"); !strings.Contains(log, "Write the parser") {
		t.Errorf("parser.go's commit is not on the main branch: %q", log)
	}
	if t.Failed() {
		t.FailNow()
	}

	// ---- Session 2, armed the same way: claims the other task, works it
	// in its worktree, merges, closes; the epic is complete.
	s2 := w.claudeSession(t, "session2", w.root, "/run-tasks "+epic, steps(
		/* 1 */ Reply{Shell: "runtasks claim " + t2},
		/* 2 */ Reply{Shell: fmt.Sprintf("git worktree add -q .worktrees/agent-%s -b agent/%s && cd .worktrees/agent-%s && "+
			"printf 'package parser\\n\\nimport \"testing\"\\n\\nfunc TestParse(t *testing.T) { Parse() }\\n' > parser_test.go && "+
			"git add parser_test.go && git commit -qm 'Test the parser' && git log --oneline -1", t2, t2, t2)},
		/* 3 */ Reply{Shell: fmt.Sprintf("cd %s && git merge -q --no-edit agent/%s && git worktree remove .worktrees/agent-%s && "+
			"for f in runs/run-*-%s/RESULTS.md; do printf '# Results\\nTestParse added, merged.\\n' > \"$f\"; done && "+
			"bd close %s --reason 'test written, merged'", w.root, t2, t2, t2, t2)},
		/* 4 */ Reply{Text: "Every task under " + epic + " is closed.\n<promise>ALL TASKS COMPLETE</promise>"},
	))
	if s2.Session == s1.Session {
		t.Fatalf("session 2 has session 1's id %s", s1.Session)
	}
	s2.requests(t, 4, "claim, worktree and commit, merge and close, the true promise")
	s2.has(t, 1, "the typed /run-tasks", "this session now drives epic "+epic)
	// [waits for branch trust, as in session 1]
	s2.has(t, 2, "runtasks claim in the Bash tool", "Task claimed: "+t2, "Claimed in beads as tester@"+s2.Session)
	s2.toolOK(t, 2, "runtasks claim in the Bash tool")
	s2.toolOK(t, 3, "git commit in the worktree")
	s2.has(t, 3, "git commit in the worktree", "Test the parser")
	// [waits for the bd close fix, as in session 1]
	s2.toolOK(t, 4, "merge, RESULTS.md and bd close")
	for n := 2; n <= 4; n++ {
		s2.hasNot(t, n, "no stop before the promise", "Stop hook feedback")
	}
	if !strings.Contains(s2.Result.Result, "<promise>ALL TASKS COMPLETE</promise>") || s2.Result.IsError || s2.Result.Subtype != "success" {
		t.Errorf("session 2 result = %+v, want success with the promise", s2.Result)
	}
	s2.noticed(t, "Stop says: runtasks: epic "+epic+" complete: every task is closed.")
	wantLines(t, "session 2 Stop decisions", w.stopDecisions(t, s2.Session),
		`complete block=false promise "ALL TASKS COMPLETE" confirmed by beads; the session's binding to `+epic+` is released`,
	)
	for _, id := range []string{t1, t2} {
		if is := w.issue(t, id); is.Status != "closed" {
			t.Errorf("%s status = %q at the end, want closed", id, is.Status)
		}
	}
	if is := w.issue(t, t2); is.Assignee != "tester@"+s2.Session {
		t.Errorf("%s assignee = %q, want tester@%s", t2, is.Assignee, s2.Session)
	}
	w.mustBeClean(t, "the repository at the end")
	if wts := w.git(t, w.root, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("linked worktrees left:\n%s", wts)
	}
}

func firstLine(t *testing.T, s string) string {
	t.Helper()
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	t.Fatalf("empty output")
	return ""
}

// TestIntegrationE2EClaudeUntrustedClone: with runtasks' hooks installed
// globally, a Claude Code session in a freshly cloned repository whose
// project.yaml names an epic, a command check and a bd that is a script of
// the repository's own never runs any of them: the hooks treat the
// untrusted project.yaml as absent and the stop tells the user how to
// trust it. [The whole test waits for branch trust.]
func TestIntegrationE2EClaudeUntrustedClone(t *testing.T) {
	w := newUserWorld(t, "uc")
	base := filepath.Dir(w.home)
	if out, errOut, err := w.exec(w.home, nil, w.runtasks, "install", "claude", "--global", "--bin", w.runtasks); err != nil {
		t.Fatalf("runtasks install claude --global: %v\n%s%s", err, out, errOut)
	}

	// Someone else's repository: its project.yaml drives an epic, runs a
	// command check and uses its own script as bd. Both leave a marker
	// when they run.
	w.writeFile(t, "project.yaml", `workflow:
  epic: uc-1
  checks:
    - beads
    - {type: command, run: "touch PWNED"}
beads:
  bin: ./evil.sh
`)
	// Just enough of bd for the epic to look done, so that the command
	// check runs too when the file is read.
	w.writeFile(t, "evil.sh", `#!/bin/sh
touch EVIL_RAN
case "$1" in
show) echo '[{"id":"uc-1","title":"Epic","status":"open","issue_type":"epic"}]' ;;
*) echo '[]' ;;
esac
`)
	if err := os.Chmod(filepath.Join(w.root, "evil.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.git(t, w.root, "add", "project.yaml", "evil.sh")
	w.git(t, w.root, "commit", "-qm", "a project.yaml that runs things")
	clone := filepath.Join(base, "clone")
	w.git(t, base, "clone", "-q", w.root, clone)

	s := w.claudeSession(t, "clone", clone, "Fix the typo in README.md.", steps(
		Reply{Text: "Fixed the typo."},
	))
	// The stop was not driven: the project.yaml's epic is not this
	// session's.
	s.requests(t, 1, "one answer, the stop allowed")
	if s.Result.Subtype != "success" || s.Result.IsError {
		t.Errorf("result = %+v, want success", s.Result)
	}
	if found := markers(base, "PWNED", "EVIL_RAN"); len(found) > 0 {
		t.Errorf("the untrusted clone's project.yaml was executed by the hooks: %v", found)
	}
	// The stop says which directory is untrusted and what to run.
	var told bool
	for _, n := range s.notices() {
		if strings.HasPrefix(n, "Stop says:") && strings.Contains(n, "runtasks trust") && strings.Contains(n, clone) {
			told = true
		}
	}
	if !told {
		t.Errorf("no Stop systemMessage naming %s and `runtasks trust`; hook messages shown: %q", clone, s.notices())
	}
	if t.Failed() {
		t.FailNow()
	}

	// Control: the fixture is live. A command the person types in the
	// clone reads the project.yaml as before, and both markers appear.
	out, errOut, _ := w.exec(clone, nil, w.runtasks, "check")
	for _, m := range []string{"PWNED", "EVIL_RAN"} {
		if found := markers(clone, m); len(found) == 0 {
			t.Errorf("control: `runtasks check` in the clone left no %s: the fixture proves nothing\n%s%s", m, out, errOut)
		}
	}
}

// sessionIDRE finds the session id the done-token reason tells the model.
var sessionIDRE = regexp.MustCompile(`your session id ([^\s,]+), with nothing else`)

// TestIntegrationE2EClaudeDoneTokenAndCap: the two other ways a driven
// Claude Code session ends. The done-token contract (TASKMASTER_DONE::<id>)
// blocks a stop without the line, and lets the session go once the line is
// printed and beads agrees; max_cycles lets a session that keeps stopping
// go after the cap, with work left and a message saying so.
func TestIntegrationE2EClaudeDoneTokenAndCap(t *testing.T) {
	w := newUserWorld(t, "dt")
	w.rt(t, "install", "claude")
	w.git(t, w.root, "add", "-A")
	w.git(t, w.root, "commit", "-qm", "runtasks: hooks and skills")

	t.Run("done token", func(t *testing.T) {
		epic := w.s.Create("Ship the lexer", "--type", "epic")
		task := w.s.Create("Write the lexer", "--parent", epic)
		var told string // the session id as the block reason gave it
		s := w.claudeSession(t, "token", w.root, "/run-tasks "+epic, func(n int, req *Request) Reply {
			if m := sessionIDRE.FindStringSubmatch(req.Tail); m != nil {
				told = m[1]
			}
			switch n {
			case 1:
				return Reply{Text: "The lexer is done, I think."}
			case 2:
				return Reply{Shell: "bd close " + task + " --reason 'lexer written'"}
			case 3:
				return Reply{Text: "Closed " + task + ".\nTASKMASTER_DONE::" + told}
			}
			return Reply{Text: fmt.Sprintf("(script overrun: request %d)", n)}
		}, "RUNTASKS_WORKFLOW__DONE_TOKEN__REQUIRED=true")
		s.requests(t, 3, "no done line, bd close, the done line")
		if told != s.Session {
			t.Errorf("the block reason gave session id %q, Claude Code's is %q", told, s.Session)
		}
		s.has(t, 2, "the stop without the done line", "Stop hook feedback:", "TASKMASTER (1/50): stop blocked.",
			"Status: 1 ready, 0 in progress, 1 remain under "+epic+".")
		// The reason never holds the done line itself (an echo of it must
		// not satisfy the contract).
		s.hasNot(t, 2, "the stop without the done line", "TASKMASTER_DONE::")
		s.toolOK(t, 3, "bd close")
		s.hasNot(t, 3, "bd close", "Stop hook feedback")
		s.noticed(t, "Stop says: runtasks: epic "+epic+" complete: every task is closed.")
		wantLines(t, "Stop decisions", w.stopDecisions(t, s.Session),
			"token_missing block=true done token not printed",
			"token_done block=false done token printed and beads agrees; the session's binding to "+epic+" is released",
		)
	})

	t.Run("cap", func(t *testing.T) {
		epic := w.s.Create("Ship the printer", "--type", "epic")
		task := w.s.Create("Write the printer", "--parent", epic)
		s := w.claudeSession(t, "cap", w.root, "/run-tasks "+epic, steps(
			Reply{Text: "Stopping here."},
			Reply{Text: "Stopping here again."},
			Reply{Text: "And again."},
		), "RUNTASKS_MAX_CYCLES=2")
		s.requests(t, 3, "two blocks, then the cap lets the third stop go")
		s.has(t, 2, "first block", "Stop hook feedback:", "runtasks: cycle 1/2 · 1 ready (next: "+task+")")
		s.has(t, 3, "second block", "Stop hook feedback:", "runtasks: cycle 2/2 · 1 ready (next: "+task+")")
		s.noticed(t, "Stop says: runtasks: max cycles reached (2/2); stop allowed with work left (work remains: 1 ready).")
		if strings.Contains(s.out, "consecutive times") {
			t.Errorf("Claude Code's own block cap fired, not runtasks'")
		}
		wantLines(t, "Stop decisions", w.stopDecisions(t, s.Session),
			"continue block=true work remains: 1 ready",
			"continue block=true work remains: 1 ready",
			"cap_reached block=false max cycles reached (2/2); the session's binding to "+epic+" is released",
		)
		if is := w.issue(t, task); is.Status != "open" {
			t.Errorf("%s status = %q, want open (work left)", task, is.Status)
		}
	})
}
