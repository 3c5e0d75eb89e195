package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// runIn runs runtasks in-process in dir with env and stdin, and returns its
// exit status, stdout and stderr.
func runIn(t *testing.T, dir string, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		In: strings.NewReader(stdin), Out: &out, Err: &errOut,
		Environ:    func() []string { return env },
		Getwd:      func() (string, error) { return dir, nil },
		Now:        time.Now,
		Executable: func() (string, error) { return "runtasks", nil },
	}
	code := Main(args, f)
	return code, out.String(), errOut.String()
}

type stopAnswer struct {
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	SystemMessage string `json:"systemMessage"`
}

// TestIntegrationStopHookEpic works a 3-task epic to completion with the
// real bd by repeated stop-hook calls, as Claude Code would make them.
func TestIntegrationStopHookEpic(t *testing.T) {
	s := beadstest.NewStore(t, "demo")
	epic := s.Create("Ship the parser", "--type", "epic")
	t1 := s.Create("Write the parser", "--parent", epic, "--priority", "1")
	t2 := s.Create("Test the parser", "--parent", epic, "--priority", "1")
	t3 := s.Create("Document the parser", "--parent", epic, "--priority", "2")
	s.Block(t2, t1)

	stop := func(msg string) stopAnswer {
		t.Helper()
		in, _ := json.Marshal(map[string]any{
			"session_id": "sess-1", "cwd": s.Root, "hook_event_name": "Stop",
			"stop_hook_active": true, "last_assistant_message": msg,
		})
		code, out, errOut := runIn(t, s.Root, s.Env, string(in), "stop-hook", "--epic", epic)
		if code != 0 {
			t.Fatalf("stop-hook exit %d: %s", code, errOut)
		}
		var a stopAnswer
		if strings.TrimSpace(out) != "" {
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatalf("stdout is not one JSON object: %q", out)
			}
		}
		return a
	}

	// Work remains: blocked, with the prompt and the state line.
	a := stop("I've made good progress, let me know if you want me to continue.")
	if a.Decision != "block" || !strings.Contains(a.Reason, "cycle 1/50 · 2 ready (next: "+t1+", "+t3+")") {
		t.Fatalf("first stop: %+v", a)
	}
	if !strings.Contains(a.Reason, "You are the orchestrator for beads epic "+epic) {
		t.Errorf("reason lacks the orchestration prompt: %q", a.Reason)
	}

	s.Close(t1)
	a = stop("Parser written.")
	if a.Decision != "block" || !strings.Contains(a.Reason, "cycle 2/50 · 2 ready") {
		t.Fatalf("second stop: %+v", a)
	}

	// A premature claim is rejected while one task remains.
	s.Close(t2)
	a = stop("<promise>ALL TASKS COMPLETE</promise>")
	if a.Decision != "block" || !strings.Contains(a.Reason, "completion rejected: 1 remain") || !strings.Contains(a.Reason, t3) {
		t.Fatalf("premature claim: %+v", a)
	}

	// All closed: the claim is accepted.
	s.Close(t3)
	a = stop("Docs written.\n<promise>ALL TASKS COMPLETE</promise>")
	if a.Decision != "" || !strings.Contains(a.SystemMessage, "complete") {
		t.Fatalf("final stop: %+v", a)
	}

	// runtasks status shows the cycles and the decisions.
	code, out, errOut := runIn(t, s.Root, s.Env, "", "status", "--epic", epic, "--json")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errOut)
	}
	var st struct {
		Sessions []struct {
			Session string `json:"session"`
			Cycles  int    `json:"cycles"`
		} `json:"sessions"`
		History []struct {
			Outcome string `json:"outcome"`
			Cycle   int    `json:"cycle"`
			Block   bool   `json:"block"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	var got []string
	for _, h := range st.History {
		got = append(got, fmt.Sprintf("%s/%d/%v", h.Outcome, h.Cycle, h.Block))
	}
	// The completion keeps the count the loop ended at; the state's
	// counter is cleared.
	want := "continue/1/true continue/2/true rejected/3/true complete/3/false"
	if strings.Join(got, " ") != want {
		t.Errorf("history = %v, want %s", got, want)
	}
	if len(st.Sessions) != 1 || st.Sessions[0].Session != "sess-1" || st.Sessions[0].Cycles != 0 {
		t.Errorf("sessions = %+v, want sess-1 with its counter cleared", st.Sessions)
	}

	code, out, _ = runIn(t, s.Root, s.Env, "", "status", "--epic", epic)
	if code != 0 || !strings.Contains(out, "sess-1") || !strings.Contains(out, "complete") {
		t.Errorf("status (text): %d\n%s", code, out)
	}
}
