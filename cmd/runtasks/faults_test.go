package main

// Hostile input and faults (issue 8): each fault has a test and a defined
// outcome. The stop hook never crashes (exit 0), never writes outside the
// state directory, and never reads a bd failure as completion.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/state"
)

const faultEpic = "bd-e"

// readyJSON is what the instant fake bd answers to `bd ready`: two ready
// tasks under the epic, so a healthy stop is blocked.
const readyJSON = `[{"id":"bd-e.1","title":"First","status":"open","priority":1,"issue_type":"task","parent":"bd-e"},` +
	`{"id":"bd-e.2","title":"Second","status":"open","priority":2,"issue_type":"task","parent":"bd-e"}]`

// faultProject makes a project root (a git repository, gitRepo, with a
// beads store: bd here is a script, the store an empty .beads) with an
// optional project.yaml, and returns it.
func faultProject(t *testing.T, yaml string) string {
	t.Helper()
	root := gitRepo(t, filepath.Join(t.TempDir(), "proj"))
	if err := os.Mkdir(filepath.Join(root, ".beads"), 0o755); err != nil {
		t.Fatal(err)
	}
	if yaml != "" {
		writeFile(t, filepath.Join(root, "project.yaml"), yaml)
	}
	return root
}

// userGitignore is the .gitignore of gitRepo's repositories.
const userGitignore = "node_modules/\n*.log\n"

// assertGitignoreKept fails when the project's own .gitignore changed.
func assertGitignoreKept(t *testing.T, root string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(root, ".gitignore")); err != nil || string(b) != userGitignore {
		t.Errorf("the project's .gitignore changed: %q, %v", b, err)
	}
}

// gitRepo makes dir a plain git repository, as a user's project is (git
// init, its own .gitignore): an empty .git directory is no repository, and
// runtasks would ask git at every stop where a real project needs no git
// process.
func gitRepo(tb testing.TB, dir string) string {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		tb.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(userGitignore), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakeBDScript writes a shell script standing in for bd and returns its
// path. body is the script after the shebang.
func fakeBDScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bd")
	writeFile(t, p, "#!/bin/sh\n"+body+"\n")
	return p
}

// readyBD is an instant bd whose ready answer is readyJSON.
func readyBD(t *testing.T) string {
	return fakeBDScript(t, `case "$1" in ready) echo '`+readyJSON+`';; *) echo '[]';; esac`)
}

func faultEnv(t *testing.T, bd string, extra ...string) []string {
	env := append(os.Environ(), "RUNTASKS_BD="+bd, "BD_DISABLE_METRICS=1", "HOME="+os.TempDir(),
		"XDG_CONFIG_HOME="+t.TempDir(), "CLAUDE_PROJECT_DIR=")
	return append(env, extra...)
}

func stopInput(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hookRun runs stop-hook in process and checks the protocol: exit 0 and a
// stdout that is empty or one JSON object.
func hookRun(t *testing.T, root string, env []string, stdin string, args ...string) (stopAnswer, string) {
	t.Helper()
	code, out, errOut := runIn(t, root, env, stdin, append([]string{"stop-hook"}, args...)...)
	if code != 0 {
		t.Fatalf("stop-hook exit %d; stderr: %s", code, errOut)
	}
	var a stopAnswer
	if s := strings.TrimSpace(out); s != "" {
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			t.Fatalf("stdout is not one JSON object: %q", out)
		}
	}
	return a, errOut
}

// decisions reads the decision log of a project's state dir.
func decisions(t *testing.T, stateDir string) []state.Record {
	t.Helper()
	recs, err := (&state.Store{Dir: stateDir}).Records(state.RecordFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestFaultBeads: bd missing, failing, hanging, printing garbage, or
// failing after printing an empty list. With a completion promise in the
// final message, the hook never records completion: under
// on_beads_error allow the stop is allowed with bd's error in the
// systemMessage; under block it is blocked with the error in the reason.
func TestFaultBeads(t *testing.T) {
	cases := []struct {
		name string
		bd   func(t *testing.T) string
		want string // in the message shown to the agent or user
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "no-such-bd") }, "no-such-bd"},
		{"failing", func(t *testing.T) string {
			return fakeBDScript(t, `echo "Error: database is locked" >&2; exit 3`)
		}, "database is locked"},
		{"empty-list-then-failing", func(t *testing.T) string {
			return fakeBDScript(t, `echo '[]'; echo "Error: disk I/O error" >&2; exit 1`)
		}, "disk I/O error"},
		{"garbage", func(t *testing.T) string {
			return fakeBDScript(t, `echo 'Warning: something }{ [not json'`)
		}, "bd"},
		{"garbage-object", func(t *testing.T) string {
			return fakeBDScript(t, `echo '{"error":"no beads database found"}'`)
		}, "no beads database found"},
		{"hanging", func(t *testing.T) string {
			return fakeBDScript(t, `exec sleep 60`)
		}, "bd"},
	}
	for _, policy := range []string{"allow", "block"} {
		for _, c := range cases {
			t.Run(policy+"/"+c.name, func(t *testing.T) {
				root := faultProject(t, "workflow:\n  stop_hook:\n    on_beads_error: "+policy+"\nbeads:\n  timeout: 1s\n")
				env := faultEnv(t, c.bd(t))
				trustProject(t, root, env)
				in := stopInput(t, map[string]any{"session_id": "s1", "cwd": root, "hook_event_name": "Stop",
					"last_assistant_message": "All done.\n<promise>ALL TASKS COMPLETE</promise>"})
				a, errOut := hookRun(t, root, env, in, "--epic", faultEpic)
				recs := decisions(t, filepath.Join(root, ".runtasks"))
				if len(recs) != 1 {
					t.Fatalf("want 1 decision, got %d; stderr: %s", len(recs), errOut)
				}
				if recs[0].Outcome != state.OutcomeBeadsError {
					t.Fatalf("outcome %q, want %q (why: %s)", recs[0].Outcome, state.OutcomeBeadsError, recs[0].Why)
				}
				switch policy {
				case "allow":
					if a.Decision == "block" {
						t.Fatalf("on_beads_error allow blocked: %+v", a)
					}
					if !strings.Contains(a.SystemMessage, c.want) || strings.Contains(strings.ToLower(a.SystemMessage), "epic complete") {
						t.Fatalf("systemMessage %q: want bd's error (%q), not completion", a.SystemMessage, c.want)
					}
				case "block":
					if a.Decision != "block" || !strings.Contains(a.Reason, c.want) {
						t.Fatalf("on_beads_error block: %+v, want a block naming %q", a, c.want)
					}
				}
			})
		}
	}
}

// TestFaultStateDirUnwritable: the state dir cannot be created (a regular
// file stands where it should be; chmod does not stop root). Without a
// counter no cap can hold, so the stop is allowed and the reason is on
// stderr and in the systemMessage; nothing is written elsewhere.
func TestFaultStateDirUnwritable(t *testing.T) {
	root := faultProject(t, "")
	writeFile(t, filepath.Join(root, ".runtasks"), "not a directory\n")
	in := stopInput(t, map[string]any{"session_id": "s1", "cwd": root, "hook_event_name": "Stop", "last_assistant_message": "hi"})
	a, errOut := hookRun(t, root, faultEnv(t, readyBD(t)), in, "--epic", faultEpic)
	if a.Decision == "block" {
		t.Fatalf("blocked without a usable state dir: %+v", a)
	}
	if !strings.Contains(errOut, "state") || !strings.Contains(a.SystemMessage, "state") {
		t.Fatalf("the state error is not reported: systemMessage %q stderr %q", a.SystemMessage, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".runtasks")); string(b) != "not a directory\n" {
		t.Fatalf("the file in the way was changed: %q", b)
	}
	assertOnlyUnder(t, filepath.Dir(root), map[string]bool{root: true}, filepath.Join(root, ".git"), filepath.Join(root, ".gitignore"), filepath.Join(root, ".beads"), filepath.Join(root, ".runtasks"))
	assertGitignoreKept(t, root)

	// A read-only state dir: only meaningful when not root (root writes
	// anyway); the same outcome.
	if os.Getuid() != 0 {
		root := faultProject(t, "")
		ro := filepath.Join(root, ".runtasks")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		in := stopInput(t, map[string]any{"session_id": "s1", "cwd": root, "hook_event_name": "Stop", "last_assistant_message": "hi"})
		if a, errOut := hookRun(t, root, faultEnv(t, readyBD(t)), in, "--epic", faultEpic); a.Decision == "block" || !strings.Contains(errOut, "state") {
			t.Fatalf("read-only state dir: %+v, stderr %q", a, errOut)
		}
	}
}

// TestFaultStateFileCorrupt: a corrupt state file is reported on stderr,
// moved aside and replaced by a fresh state; the hook still decides.
func TestFaultStateFileCorrupt(t *testing.T) {
	root := faultProject(t, "")
	env := faultEnv(t, readyBD(t))
	in := stopInput(t, map[string]any{"session_id": "s1", "cwd": root, "hook_event_name": "Stop", "last_assistant_message": "hi"})
	if a, _ := hookRun(t, root, env, in, "--epic", faultEpic); !strings.Contains(a.Reason, "cycle 1/") {
		t.Fatalf("first stop: %+v", a)
	}
	files, _ := filepath.Glob(filepath.Join(root, ".runtasks", "sessions", "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one state file, got %v", files)
	}
	for _, garbage := range []string{"{\"session\": \"s1\", \"cycles\": 7", "\x00\x01\x02", `{"session":"other","epic":"bd-e","cycles":40}`} {
		writeFile(t, files[0], garbage)
		a, errOut := hookRun(t, root, env, in, "--epic", faultEpic)
		if a.Decision != "block" || !strings.Contains(a.Reason, "cycle 1/") {
			t.Fatalf("after corrupting with %q: %+v, want a fresh count", garbage, a)
		}
		if !strings.Contains(errOut, "corrupt") {
			t.Fatalf("corrupt state not reported on stderr: %q", errOut)
		}
	}
	aside, _ := filepath.Glob(files[0] + ".corrupt-*")
	if len(aside) != 3 {
		t.Fatalf("want the 3 corrupt files kept aside, got %v", aside)
	}
	code, out, errOut := runIn(t, root, env, "", "status", "--json")
	if code != 0 || !strings.Contains(out, `"cycles": 1`) && !strings.Contains(out, `"cycles":1`) {
		t.Fatalf("status after corruption: exit %d\n%s\n%s", code, out, errOut)
	}
}

// The killed-writer helper: when RUNTASKS_FAULT_HELPER names a state dir,
// this process takes the session's lock through the store, adds one cycle,
// leaves a torn temp file beside the state as a writer killed mid-write
// would, signals readiness, and waits to be killed with SIGKILL.
func TestFaultKilledWriterHelper(t *testing.T) {
	dir := os.Getenv("RUNTASKS_FAULT_HELPER")
	if dir == "" {
		t.Skip("helper process for TestFaultKilledWriter")
	}
	store := &state.Store{Dir: dir}
	path, err := store.StatePath("s1", faultEpic)
	if err != nil {
		t.Fatal(err)
	}
	store.Update("s1", faultEpic, func(st *state.State) error {
		st.Cycles++
		// What a writer killed before its rename leaves: its temp file,
		// half written (one name per state file: the writer holds the lock).
		os.WriteFile(path+".tmp-w", []byte(`{"session":"s1","epic":"bd-e","cyc`), 0o644)
		os.WriteFile(filepath.Join(dir, "helper.ready"), nil, 0o644)
		time.Sleep(time.Minute)
		return nil
	})
	t.Fatal("the helper was not killed")
}

// TestFaultKilledWriter: a runtasks killed with SIGKILL while it holds the
// session's lock in the middle of a write. The next hook takes the lock
// (flock dies with the process), removes the torn temp file, and counts on
// from the last complete state: only the killed hook's cycle is lost.
func TestFaultKilledWriter(t *testing.T) {
	root := faultProject(t, "")
	stateDir := filepath.Join(root, ".runtasks")
	env := faultEnv(t, readyBD(t))
	in := stopInput(t, map[string]any{"session_id": "s1", "cwd": root, "hook_event_name": "Stop", "last_assistant_message": "hi"})
	for i := 1; i <= 3; i++ {
		if a, _ := hookRun(t, root, env, in, "--epic", faultEpic); !strings.Contains(a.Reason, fmt.Sprintf("cycle %d/", i)) {
			t.Fatalf("stop %d: %+v", i, a)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestFaultKilledWriterHelper$")
	cmd.Env = append(os.Environ(), "RUNTASKS_FAULT_HELPER="+stateDir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(stateDir, "helper.ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the helper never took the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper did not die by SIGKILL: %v", err)
	}
	a, errOut := hookRun(t, root, env, in, "--epic", faultEpic)
	if a.Decision != "block" || !strings.Contains(a.Reason, "cycle 4/") {
		t.Fatalf("after the kill: %+v, want cycle 4 (stderr %s)", a, errOut)
	}
	if torn, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*.tmp-*")); len(torn) != 0 {
		t.Fatalf("torn temp files left: %v", torn)
	}
}

// linkedBinary makes a directory holding the test binary under the name
// runtasks (testscript.Main then runs the CLI) and returns its path.
func linkedBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "runtasks")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestFaultConcurrentHooks: 64 stops of one session at once, each a
// separate process with its own final message (64 stops, not one stop's
// hooks: those count once, see TestStopDuplicateHooks). Every one is
// counted: the cycles in the decision log are exactly 1..64 and the state
// holds 64.
func TestFaultConcurrentHooks(t *testing.T) {
	const n = 64
	// No-progress escalation off: the fake bd never changes.
	root := faultProject(t, "workflow:\n  no_progress_cycles: 0\n")
	bin := linkedBinary(t)
	env := faultEnv(t, readyBD(t))
	trustProject(t, root, env)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		in := stopInput(t, map[string]any{"session_id": "s1", "cwd": root, "hook_event_name": "Stop", "last_assistant_message": fmt.Sprint("hi ", i)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "stop-hook", "--epic", faultEpic, "--max-cycles", "1000")
			cmd.Dir, cmd.Env, cmd.Stdin = root, env, strings.NewReader(in)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("%v: %s", err, stderr.String())
				return
			}
			if !strings.Contains(string(out), `"decision":"block"`) {
				errs <- fmt.Errorf("not blocked: %s %s", out, stderr.String())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs := decisions(t, filepath.Join(root, ".runtasks"))
	seen := map[int]bool{}
	for _, r := range recs {
		seen[r.Cycle] = true
	}
	if len(recs) != n || len(seen) != n || !seen[1] || !seen[n] {
		t.Fatalf("%d decisions with %d distinct cycles, want %d and 1..%d", len(recs), len(seen), n, n)
	}
	st, err := (&state.Store{Dir: filepath.Join(root, ".runtasks")}).Get("s1", faultEpic)
	if err != nil || st.Cycles != n {
		t.Fatalf("state cycles %d (%v), want %d", st.Cycles, err, n)
	}
}

// TestFaultHostileSessionIDs: session ids that try to leave the state dir,
// hold slashes, NUL or 10 KB of text. None writes outside the state dir; a
// NUL id is refused (stop allowed, said on stderr); the others get their
// own counter.
func TestFaultHostileSessionIDs(t *testing.T) {
	root := faultProject(t, "")
	env := faultEnv(t, readyBD(t))
	ids := []string{
		"../escape", "../../../../../../tmp/escape", "a/b/c", "/etc/passwd", `..\..\x`, ".", "..",
		"sessions/../../escape", strings.Repeat("../", 3500), strings.Repeat("x", 10<<10), "*?[", "\u202e\ufeff☃",
	}
	for _, id := range ids {
		in := stopInput(t, map[string]any{"session_id": id, "cwd": root, "hook_event_name": "Stop", "last_assistant_message": "hi"})
		a, errOut := hookRun(t, root, env, in, "--epic", faultEpic)
		if a.Decision != "block" || !strings.Contains(a.Reason, "cycle 1/") {
			t.Errorf("session %.40q: %+v (stderr %s)", id, a, errOut)
		}
	}
	a, errOut := hookRun(t, root, env, `{"session_id":"../a\u0000b","cwd":`+strconv.Quote(root)+`,"hook_event_name":"Stop"}`, "--epic", faultEpic)
	if a.Decision == "block" || !strings.Contains(errOut, "NUL") {
		t.Errorf("NUL session id: %+v, stderr %q", a, errOut)
	}
	states, err := (&state.Store{Dir: filepath.Join(root, ".runtasks")}).List()
	if err != nil || len(states) != len(ids) {
		t.Fatalf("%d states (%v), want %d", len(states), err, len(ids))
	}
	for _, st := range states {
		if st.Cycles != 1 {
			t.Errorf("session %.40q has %d cycles, want 1", st.Session, st.Cycles)
		}
	}
	assertOnlyUnder(t, filepath.Dir(root), map[string]bool{root: true}, filepath.Join(root, ".git"), filepath.Join(root, ".gitignore"), filepath.Join(root, ".beads"), filepath.Join(root, ".runtasks"))
	assertGitignoreKept(t, root)
	if _, err := os.Lstat("/tmp/escape"); err == nil {
		t.Error("/tmp/escape exists")
	}
}

// assertOnlyUnder fails when anything under top exists other than the
// allowed directories (kept) and what lies under the allowed prefixes.
func assertOnlyUnder(t *testing.T, top string, dirs map[string]bool, prefixes ...string) {
	t.Helper()
	filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if p == top || dirs[p] {
			return nil
		}
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+string(filepath.Separator)) {
				return nil
			}
		}
		t.Errorf("written outside the state dir: %s", p)
		return nil
	})
}

// TestFaultTranscripts: the final message read from the transcript file
// (no last_assistant_message). A 5 MB single line is read whole: its
// promise is judged against beads (rejected, ready work remains). A
// transcript that ends mid-line (a torn write) ignores the torn line: its
// promise does not count and the last complete message decides.
func TestFaultTranscripts(t *testing.T) {
	root := faultProject(t, "")
	env := faultEnv(t, readyBD(t))
	assistant := func(text string) string {
		b, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
			"id": "msg", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
		return string(b)
	}
	user := `{"type":"user","message":{"role":"user","content":"go on"}}`
	cases := []struct {
		name, transcript string
		outcome          state.Outcome
	}{
		{"5MB-line", user + "\n" + assistant(strings.Repeat("word ", 1<<20)+"\n<promise>ALL TASKS COMPLETE</promise>") + "\n", state.OutcomeRejected},
		{"5MB-user-line", assistant("still working") + "\n" + `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("a", 5<<20) + ` <promise>ALL TASKS COMPLETE</promise>"}}` + "\n", state.OutcomeContinue},
		{"ends-mid-line", user + "\n" + assistant("still working") + "\n" + `{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"<promise>ALL TASKS COMPLETE</promise>`, state.OutcomeContinue},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := filepath.Join(t.TempDir(), "t.jsonl")
			writeFile(t, tp, c.transcript)
			session := "t" + strconv.Itoa(i)
			in := stopInput(t, map[string]any{"session_id": session, "cwd": root, "hook_event_name": "Stop", "transcript_path": tp})
			a, errOut := hookRun(t, root, env, in, "--epic", faultEpic)
			if a.Decision != "block" {
				t.Fatalf("%+v (stderr %s)", a, errOut)
			}
			recs, err := (&state.Store{Dir: filepath.Join(root, ".runtasks")}).Records(state.RecordFilter{Session: session})
			if err != nil || len(recs) != 1 || recs[0].Outcome != c.outcome {
				t.Fatalf("records %+v (%v), want one %q", recs, err, c.outcome)
			}
		})
	}
}
