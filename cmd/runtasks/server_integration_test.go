package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
	"github.com/runtasks/runtasks/internal/engine"
)

// serverScenario works a 3-task epic (t2 waits on t1) to completion with
// stop-hook calls, as TestIntegrationStopHookEpic does, and returns each
// stop's decision with the ids replaced by their names, so that runs on two
// stores compare.
func serverScenario(t *testing.T, s *beadstest.Store) []string {
	t.Helper()
	epic := s.Create("Ship the parser", "--type", "epic")
	t1 := s.Create("Write the parser", "--parent", epic, "--priority", "1")
	t2 := s.Create("Test the parser", "--parent", epic, "--priority", "1")
	t3 := s.Create("Document the parser", "--parent", epic, "--priority", "2")
	s.Block(t2, t1)
	names := strings.NewReplacer(t1, "T1", t2, "T2", t3, "T3", epic, "EPIC")
	var got []string
	stop := func(msg string) {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": "sess-1", "cwd": s.Root, "hook_event_name": "Stop",
			"stop_hook_active": true, "last_assistant_message": msg})
		code, out, errOut := runIn(t, s.Root, s.Env, string(in), "stop-hook", "--epic", epic)
		if code != 0 {
			t.Fatalf("stop-hook exit %d: %s", code, errOut)
		}
		var a stopAnswer
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("stdout is not one JSON object: %q", out)
		}
		head, _, _ := strings.Cut(a.Reason, "\n")
		got = append(got, names.Replace(fmt.Sprintf("%s|%s|%s", a.Decision, head, a.SystemMessage)))
	}
	stop("I've made good progress, let me know if you want me to continue.")
	s.Close(t1)
	stop("Parser written.")
	s.Close(t2)
	stop("<promise>ALL TASKS COMPLETE</promise>")
	s.Close(t3)
	stop("Docs written.\n<promise>ALL TASKS COMPLETE</promise>")
	return got
}

// TestIntegrationServerMode: runtasks works unchanged against a store in
// server mode (bd init --server on a real dolt sql-server): the stop hook's
// decisions are those of an embedded store, doctor says which mode the
// store is in and that the server answers. With the server down, a stop is
// a bd error carrying bd's message — never "no work" — and doctor says the
// server does not answer.
func TestIntegrationServerMode(t *testing.T) {
	srv := beadstest.StartDoltServer(t)
	server := beadstest.NewServerStore(t, "sv", srv)
	embedded := beadstest.NewStore(t, "sv")

	want := serverScenario(t, embedded)
	got := serverScenario(t, server)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("server-mode decisions differ from embedded:\nserver:\n%s\nembedded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) != 4 || !strings.HasPrefix(want[0], "block|") || !strings.Contains(want[3], "complete") {
		t.Fatalf("embedded decisions are not the scenario's: %q", want)
	}

	code, out, errOut := runIn(t, server.Root, server.Env, "", "doctor")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("server    server mode: Dolt SQL server 127.0.0.1:%d, database sv, user root: answers", srv.Port)) {
		t.Errorf("doctor, server up: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runIn(t, embedded.Root, embedded.Env, "", "doctor")
	if code != 0 || !strings.Contains(out, "server    embedded store") {
		t.Errorf("doctor, embedded: exit %d\n%s", code, out)
	}

	// The server goes down: a new epic's stop is a bd error with bd's words.
	epic := server.Create("Another epic", "--type", "epic")
	server.Create("A task", "--parent", epic)
	srv.Stop()
	in, _ := json.Marshal(map[string]any{"session_id": "sess-2", "cwd": server.Root, "hook_event_name": "Stop", "last_assistant_message": "Done."})
	code, out, errOut = runIn(t, server.Root, server.Env, string(in), "stop-hook", "--epic", epic)
	if code != 0 {
		t.Fatalf("stop-hook exit %d: %s", code, errOut)
	}
	var a stopAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("stdout is not one JSON object: %q", out)
	}
	if !strings.Contains(a.SystemMessage, fmt.Sprintf("Dolt server unreachable at 127.0.0.1:%d", srv.Port)) ||
		!strings.Contains(a.SystemMessage, "could not read beads") || strings.Contains(a.SystemMessage, "complete") {
		t.Errorf("server down: want a bd error with bd's message, got %+v", a)
	}
	code, out, _ = runIn(t, server.Root, server.Env, "", "doctor", "--epic", epic)
	if code != engine.ExitUsage || !strings.Contains(out, "user root: does not answer") || !strings.Contains(out, "Dolt server unreachable") {
		t.Errorf("doctor, server down: exit %d\n%s", code, out)
	}

	// Back up: the same stop blocks with the task ready.
	srv.Start()
	code, out, _ = runIn(t, server.Root, server.Env, string(in), "stop-hook", "--epic", epic)
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != 0 || a.Decision != "block" {
		t.Errorf("server back: exit %d, %+v", code, a)
	}
}
