package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// TestIntegrationChecks drives the stop hook and runtasks check with every
// built-in checker configured, on a real bd store in a real git repository:
// each check in turn holds the stop until its condition is met.
func TestIntegrationChecks(t *testing.T) {
	s := beadstest.NewStore(t, "chk")
	epic := s.Create("Epic", "--type", "epic")
	task := s.Create("The task", "--parent", epic)
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(s.Root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("project.yaml", `workflow:
  feedback_limit: 2
  checks:
    - beads
    - {type: command, name: tests, run: "test -f PASS || { echo 'FAIL: TestThing'; exit 1; }", timeout: 30s}
    - {type: files, paths: [RESULTS.md], non_empty: true, template: RESULTS.tmpl}
    - plan
    - type: composite
      mode: any
      checks: [promise, done_token]
`)
	trustProject(t, s.Root, s.Env)
	write("RESULTS.tmpl", "# Results\n")
	write("RESULTS.md", "# Results\n")
	tr := filepath.Join(s.Root, "transcript.jsonl")
	writeTranscript := func(todoStatus, final string) {
		t.Helper()
		todo, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "t", "name": "TodoWrite", "input": map[string]any{"todos": []any{
				map[string]any{"content": "Do it", "status": todoStatus, "activeForm": "Doing it"}}}}}}})
		text, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": final}}}})
		write("transcript.jsonl", string(todo)+"\n"+string(text)+"\n")
	}
	stop := func(final string) stopAnswer {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": "c-1", "cwd": s.Root, "hook_event_name": "Stop",
			"transcript_path": tr, "last_assistant_message": final})
		code, out, errOut := runIn(t, s.Root, s.Env, string(in), "stop-hook", "--epic", epic)
		if code != 0 {
			t.Fatalf("stop-hook: %d %s", code, errOut)
		}
		var a stopAnswer
		if strings.TrimSpace(out) != "" {
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatalf("stdout: %q", out)
			}
		}
		return a
	}
	check := func(wantCode int, want string) {
		t.Helper()
		code, out, errOut := runIn(t, s.Root, s.Env, "", "check", "--epic", epic, "--transcript", tr, "--session", "c-1")
		if code != wantCode || !strings.Contains(out, want) {
			t.Fatalf("check: exit %d (want %d), want %q in\n%s%s", code, wantCode, want, out, errOut)
		}
	}
	steps := []struct {
		do     func()
		final  string
		reason string // "" = allowed
	}{
		{func() { writeTranscript("in_progress", "x") }, "Stopping.", "cycle 1/50 · 1 ready (next: "},
		{func() { s.Close(task) }, "Closed it.", "FAIL: TestThing"},
		{func() { write("PASS", "") }, "Tests pass.", "RESULTS.md is unchanged from RESULTS.tmpl"},
		{func() { write("RESULTS.md", "# Results\nDone and tested.\n") }, "Written.", "Do it [in_progress]"},
		{func() { writeTranscript("completed", "x") }, "All done.", "no completion promise"},
		{func() {}, "TASKMASTER_DONE::c-1", ""},
	}
	for i, st := range steps {
		st.do()
		a := stop(st.final)
		if st.reason == "" {
			if a.Decision != "" {
				t.Fatalf("step %d: want the stop allowed, got %+v", i+1, a)
			}
			continue
		}
		if a.Decision != "block" || !strings.Contains(a.Reason, st.reason) {
			t.Fatalf("step %d: want a block with %q, got %+v", i+1, st.reason, a)
		}
	}
	// runtasks check agrees: the transcript's final message now lacks the
	// token ("x"), so the composite is incomplete; with it, complete.
	check(2, "incomplete done_token: done token not printed")
	writeTranscript("completed", "TASKMASTER_DONE::c-1")
	check(0, "result: complete")
}
