package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// TestIntegrationClaimAndArm runs the prompt, session and stop hooks with the
// real bd: a claim through a prompt, a refused claim by another session,
// RESULTS.md gating the claiming session's stop, /run-tasks arming one
// session while another stays untouched, and the session hook after compact.
func TestIntegrationClaimAndArm(t *testing.T) {
	s := beadstest.NewStore(t, "ca")
	goal := s.Create("Ship the parser", "--type", "epic")
	plan := s.Create("Parser plan", "--type", "epic", "--parent", goal)
	task := s.Create("Write the lexer", "--parent", plan, "--acceptance", "- keywords tokenised")
	hookIn := func(session, event, extra string) string {
		return fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":%q%s}`, session, s.Root, event, extra)
	}
	context := func(out string) string {
		t.Helper()
		var v struct {
			HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("not JSON: %q: %v", out, err)
		}
		return v.HookSpecificOutput.AdditionalContext
	}
	run := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errOut := runIn(t, s.Root, s.Env, stdin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}

	out := run(hookIn("s-1", "UserPromptSubmit", `,"prompt":"work on `+task+`"`), "prompt-hook")
	if c := context(out); !strings.HasPrefix(c, "Task claimed: "+task) || !strings.Contains(c, "Plan: "+plan) || !strings.Contains(c, "Goal: "+goal) {
		t.Fatalf("claim context: %s", c)
	}
	out = run(hookIn("s-2", "UserPromptSubmit", `,"prompt":"claim `+task+`"`), "prompt-hook")
	if c := context(out); !strings.Contains(c, "already claimed by tester@s-1") {
		t.Errorf("second session: %s", c)
	}
	if out := s.BD("show", task, "--json"); !strings.Contains(out, `"assignee": "tester@s-1"`) {
		t.Errorf("beads after the refused claim: %s", out)
	}

	// RESULTS.md gates s-1's stop.
	stop := hookIn("s-1", "Stop", `,"last_assistant_message":"Done."`)
	if out := run(stop, "stop-hook"); !strings.Contains(out, `"decision":"block"`) || !strings.Contains(out, "RESULTS.md") {
		t.Fatalf("stop with the template: %s", out)
	}
	runs, _ := filepath.Glob(filepath.Join(s.Root, "runs", "run-*", "RESULTS.md"))
	if len(runs) != 1 {
		t.Fatalf("RESULTS.md files: %v", runs)
	}
	os.WriteFile(runs[0], []byte("# Results\nLexer written, go test passes.\n"), 0o644)
	if out := run(stop, "stop-hook"); out != "" {
		t.Errorf("stop with results written: %s", out)
	}

	// /run-tasks arms s-2 only.
	out = run(hookIn("s-2", "UserPromptSubmit", `,"prompt":"/run-tasks `+goal+`"`), "prompt-hook")
	if c := context(out); !strings.Contains(c, "this session now drives epic "+goal) {
		t.Fatalf("arm context: %s", c)
	}
	if out := run(hookIn("s-2", "Stop", `,"last_assistant_message":"Done."`), "stop-hook"); !strings.Contains(out, `"decision":"block"`) {
		t.Errorf("armed session not driven: %q", out)
	}
	if out := run(hookIn("s-3", "Stop", `,"last_assistant_message":"Done."`), "stop-hook"); out != "" {
		t.Errorf("unbound session touched: %q", out)
	}
	out = run(hookIn("s-2", "SessionStart", `,"source":"compact"`), "session-hook")
	if c := context(out); !strings.Contains(c, "In progress: 1 ("+task) || !strings.Contains(c, "orchestrator for beads epic "+goal) {
		t.Errorf("session context: %s", c)
	}
	if out := run("", "disarm", "--session", "s-2"); !strings.Contains(out, "disarmed") {
		t.Errorf("disarm: %s", out)
	}
	if out := run(hookIn("s-2", "Stop", `,"last_assistant_message":"Done."`), "stop-hook"); out != "" {
		t.Errorf("disarmed session still driven: %q", out)
	}
}
