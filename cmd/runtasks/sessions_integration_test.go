package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// userRepo makes the user's setting around a real-bd store: a plain git
// repository with its own .gitignore and a commit, nothing of runtasks'
// excluded by hand.
func userRepo(t *testing.T, prefix string) *beadstest.Store {
	t.Helper()
	s := beadstest.NewStore(t, prefix)
	os.WriteFile(filepath.Join(s.Root, ".gitignore"), []byte("node_modules/\n*.log\n"), 0o644)
	os.WriteFile(filepath.Join(s.Root, "main.go"), []byte("package main\n"), 0o644)
	userGit(t, s, "add", ".gitignore", "main.go")
	userGit(t, s, "commit", "-qm", "init")
	if out := userGit(t, s, "status", "--porcelain"); out != "" {
		t.Fatalf("the fresh repository is not clean:\n%s", out)
	}
	return s
}

func userGit(t *testing.T, s *beadstest.Store, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = s.Root, s.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// hookRun runs runtasks in-process with a deadline: a hook that blocks on
// a file fails the test instead of hanging it.
func runWithin(t *testing.T, s *beadstest.Store, stdin string, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := runIn(t, s.Root, s.Env, stdin, args...)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(60 * time.Second):
		t.Fatalf("runtasks %v did not return within 60s", args)
		return 0, "", ""
	}
}

func hookContext(t *testing.T, out string) string {
	t.Helper()
	if out == "" {
		return ""
	}
	var v struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %q: %v", out, err)
	}
	return v.HookSpecificOutput.AdditionalContext
}

// TestIntegrationOnlyAnExplicitRequestArms: the sentences arm
// nothing; the plugin's namespaced skill arms; a claim of an epic claims
// nothing; runtasks arm refuses unknown and closed ids.
func TestIntegrationOnlyAnExplicitRequestArms(t *testing.T) {
	s := userRepo(t, "demo")
	epic := s.Create("Ship the parser", "--type", "epic")
	task := s.Create("Write the lexer", "--parent", epic)
	old := s.Create("Old epic", "--type", "epic")
	s.Close(old)
	prompt := func(session, text string) string {
		t.Helper()
		in := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":%q}`, session, s.Root, text)
		code, out, errOut := runWithin(t, s, in, "prompt-hook")
		if code != 0 {
			t.Fatalf("prompt-hook: exit %d: %s", code, errOut)
		}
		return hookContext(t, out)
	}
	stop := func(session string) string {
		t.Helper()
		in := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"Stop","last_assistant_message":"Done."}`, session, s.Root)
		_, out, _ := runWithin(t, s, in, "stop-hook")
		return out
	}

	for _, sentence := range []string{
		"Fix the typo. Do NOT run tasks for " + epic + ", that epic is not ready.",
		"I will never run tasks under " + epic + ".",
		"Fix the typo. Do NOT /run-tasks " + epic + " yet.",
	} {
		if c := prompt("s-talk", sentence); c != "" {
			t.Errorf("%q answered: %s", sentence, c)
		}
	}
	if out := stop("s-talk"); out != "" {
		t.Errorf("a session that only talked about the epic is driven: %s", out)
	}

	if c := prompt("s-plugin", "/runtasks:run-tasks "+epic); !strings.Contains(c, "this session now drives epic "+epic) {
		t.Fatalf("the plugin's skill did not arm: %q", c)
	}
	if out := stop("s-plugin"); !strings.Contains(out, `"decision":"block"`) {
		t.Errorf("armed session not driven: %q", out)
	}

	want := epic + " is an epic: /run-tasks " + epic + " drives it"
	if c := prompt("s-claim", "work on "+epic); !strings.Contains(c, want) {
		t.Errorf("claim of an epic: %q, want %q", c, want)
	}
	if out := s.BD("show", epic, "--json"); strings.Contains(out, `"assignee"`) || !strings.Contains(out, `"status": "open"`) {
		t.Errorf("the epic after a refused claim: %s", out)
	}
	if code, _, errOut := runWithin(t, s, "", "claim", epic, "--session", "s-claim"); code != 4 || !strings.Contains(errOut, want) {
		t.Errorf("runtasks claim <epic>: exit %d: %s", code, errOut)
	}
	if c := prompt("s-claim", "work on "+task); !strings.HasPrefix(c, "Task claimed: "+task) {
		t.Errorf("claim of a task: %q", c)
	}

	if code, _, errOut := runWithin(t, s, "", "arm", "--epic", old, "--session", "s-arm"); code != 4 || !strings.Contains(errOut, old+" is closed; nothing armed") {
		t.Errorf("runtasks arm <closed>: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runWithin(t, s, "", "arm", "--epic", "demo-nope", "--session", "s-arm"); code != 3 || !strings.Contains(errOut, "beads has no issue demo-nope") {
		t.Errorf("runtasks arm <unknown>: exit %d: %s", code, errOut)
	}
	if out := stop("s-arm"); out != "" {
		t.Errorf("refused arms still drive the session: %s", out)
	}
}

// TestIntegrationResultsNotARegularFile: RESULTS.md made a FIFO or a
// symlink to /dev/zero: the stop and session hooks return at once, the
// stop is judged without it (results not written) and the session hook
// says what the file is.
func TestIntegrationResultsNotARegularFile(t *testing.T) {
	s := userRepo(t, "rs")
	epic := s.Create("Ship the parser", "--type", "epic")
	task := s.Create("Write the lexer", "--parent", epic)
	in := fmt.Sprintf(`{"session_id":"s-1","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":"claim %s"}`, s.Root, task)
	if _, out, _ := runWithin(t, s, in, "prompt-hook"); !strings.HasPrefix(hookContext(t, out), "Task claimed: "+task) {
		t.Fatalf("claim: %s", out)
	}
	results, _ := filepath.Glob(filepath.Join(s.Root, "runs", "run-*", "RESULTS.md"))
	if len(results) != 1 {
		t.Fatalf("RESULTS.md files: %v", results)
	}
	for _, tc := range []struct {
		name string
		make func(path string) error
		what string
	}{
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is a FIFO"},
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "is a character device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(results[0])
			if err := tc.make(results[0]); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			stopIn := fmt.Sprintf(`{"session_id":"s-1","cwd":%q,"hook_event_name":"Stop","last_assistant_message":"Done."}`, s.Root)
			code, out, errOut := runWithin(t, s, stopIn, "stop-hook")
			if code != 0 || !strings.Contains(out, `"decision":"block"`) || !strings.Contains(out, "RESULTS.md") ||
				!strings.Contains(out, "not read: ") || !strings.Contains(out, tc.what) {
				t.Errorf("stop-hook: exit %d: %s %s", code, out, errOut)
			}
			startIn := fmt.Sprintf(`{"session_id":"s-1","cwd":%q,"hook_event_name":"SessionStart","source":"resume"}`, s.Root)
			code, out, errOut = runWithin(t, s, startIn, "session-hook")
			if c := hookContext(t, out); code != 0 || !strings.Contains(c, "RESULTS.md not read: ") || !strings.Contains(c, tc.what) {
				t.Errorf("session-hook: exit %d: %q %s", code, c, errOut)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("the hooks took %s", d)
			}
		})
	}
}

// TestIntegrationGeminiEarlierPromise is the case: one task open,
// a clean work tree, an earlier turn's <promise>CONTEXT LIMIT -
// CHECKPOINT</promise> followed by "Committed. Now working on rt-lal.2.":
// prompt_response holds the promise, the transcript's last model record
// does not, and the stop is blocked. The same stop whose last model record
// is the promise is let go: runtasks' own files (.runtasks/, written by
// the first stop) do not dirty the repository.
func TestIntegrationGeminiEarlierPromise(t *testing.T) {
	s := userRepo(t, "rt")
	epic := s.Create("Lexer and parser", "--type", "epic")
	s.Create("Write the lexer", "--parent", epic)
	fixture, err := os.ReadFile(filepath.Join("..", "..", "internal", "transcript", "testdata", "gemini-0.61-earlier-promise.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	earlier := filepath.Join(dir, "session-earlier.jsonl")
	os.WriteFile(earlier, fixture, 0o600)
	last := filepath.Join(dir, "session-last.jsonl")
	os.WriteFile(last, append(append([]byte(nil), fixture...),
		[]byte(`{"id":"a1f0c6de-0006","timestamp":"2026-11-23T14:00:09.000Z","type":"gemini","content":"Saving state.\n<promise>CONTEXT LIMIT - CHECKPOINT</promise>","thoughts":[],"model":"gemini-2.5-flash"}`+"\n")...), 0o600)
	cumulative := "Context is running low, saving state.\n<promise>CONTEXT LIMIT - CHECKPOINT</promise>\nCommitting the lexer.\nCommitted. Now working on rt-lal.2."
	stop := func(transcript string) string {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": "g-1", "transcript_path": transcript, "cwd": s.Root,
			"hook_event_name": "AfterAgent", "prompt": "/run-tasks " + epic, "prompt_response": cumulative, "stop_hook_active": false})
		code, out, errOut := runWithin(t, s, string(in), "stop-hook", "--epic", epic)
		if code != 0 {
			t.Fatalf("stop-hook: exit %d: %s", code, errOut)
		}
		return out
	}
	if out := stop(earlier); !strings.Contains(out, `"decision":"deny"`) {
		t.Errorf("an earlier turn's promise let the stop go: %s", out)
	}
	if out := userGit(t, s, "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("runtasks' files show in git status:\n%s", out)
	}
	if out := stop(last); strings.Contains(out, `"decision"`) || !strings.Contains(out, "checkpoint") {
		t.Errorf("the checkpoint in the last model record was not accepted: %s", out)
	}
}
