package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
	"github.com/runtasks/runtasks/internal/state"
)

// TestIntegrationEntryPointsAgree: runtasks stop-hook, runtasks run and
// runtasks check give the same decision for the same beads state (the real
// bd), the same checks and the same final message, because all three go
// through one stop transaction.
func TestIntegrationEntryPointsAgree(t *testing.T) {
	const (
		failing = "    - {type: command, name: tests, run: \"echo FAIL: TestLex; exit 1\", timeout: 1m}\n"
		passing = "    - {type: command, name: tests, run: \"true\", timeout: 1m}\n"
	)
	type beadsState int
	const (
		readyWork beadsState = iota
		allClosed
		onlyBlocked
	)
	cases := []struct {
		name   string
		state  beadsState
		msg    string
		checks string
		want   state.Outcome
	}{
		{"ready work, idle", readyWork, "Waiting.", "", state.OutcomeContinue},
		{"ready work, false promise", readyWork, "<promise>ALL TASKS COMPLETE</promise>", "", state.OutcomeRejected},
		{"all closed, promise", allClosed, "<promise>ALL TASKS COMPLETE</promise>", "", state.OutcomeComplete},
		{"only blocked work", onlyBlocked, "<promise>BLOCKED - NEEDS USER</promise>", "", state.OutcomeEscalated},
		{"all closed, failing check", allClosed, "Done.", failing, state.OutcomeIncomplete},
		{"all closed, passing check", allClosed, "Done.", passing, state.OutcomeComplete},
		{"ready work, failing check", readyWork, "Done.", failing, state.OutcomeContinue},
	}
	stores := map[beadsState]*beadstest.Store{}
	epics := map[beadsState]string{}
	for _, c := range cases {
		if stores[c.state] != nil {
			continue
		}
		s := beadstest.NewStore(t, "ep")
		epic := s.Create("Ship the parser", "--type", "epic")
		t1 := s.Create("Write the parser", "--parent", epic)
		switch c.state {
		case allClosed:
			s.Close(t1)
		case onlyBlocked:
			s.Status(t1, "blocked")
		}
		stores[c.state], epics[c.state] = s, epic
	}

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, epic := stores[c.state], epics[c.state]
			dir := t.TempDir()
			// The agent `runtasks run` starts: it says the final message
			// in Claude Code's stream-json shape and changes nothing.
			agent := filepath.Join(dir, "agent.sh")
			result, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false,
				"result": c.msg, "session_id": "agent-1"})
			writeFileMode(t, agent, "#!/bin/sh\necho '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"agent-1\"}'\ncat <<'EOF'\n"+string(result)+"\nEOF\n", 0o755)
			// The transcript runtasks check reads the same message from.
			line, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
				"content": []map[string]any{{"type": "text", "text": c.msg}}}})
			tr := filepath.Join(dir, "transcript.jsonl")
			writeFile(t, tr, string(line)+"\n")
			yaml := "run:\n  claude_bin: " + agent + "\nworkflow:\n  checks:\n"
			if c.checks == "" {
				yaml = "run:\n  claude_bin: " + agent + "\n"
			} else {
				yaml += "    - beads\n" + c.checks
			}
			writeFile(t, filepath.Join(s.Root, "project.yaml"), yaml)
			trustProject(t, s.Root, s.Env)

			// stop-hook
			session := fmt.Sprintf("hook-%d", i)
			in, _ := json.Marshal(map[string]any{"session_id": session, "cwd": s.Root, "hook_event_name": "Stop", "last_assistant_message": c.msg})
			if code, _, errOut := runIn(t, s.Root, s.Env, string(in), "stop-hook", "--epic", epic); code != 0 {
				t.Fatalf("stop-hook: exit %d %s", code, errOut)
			}
			_, out, _ := runIn(t, s.Root, s.Env, "", "status", "--session", session, "--history", "1", "--jq", ".history[0].outcome")
			hook := strings.TrimSpace(out)

			// check
			_, out, errOut := runIn(t, s.Root, s.Env, "", "check", "--epic", epic, "--transcript", tr, "--json")
			var rep checkReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("check --json: %v\n%s\n%s", err, out, errOut)
			}

			// run: the engine's first block starts cycle 1; after its agent
			// run the engine decides (a cap of 2 leaves that decision to
			// the rules, not the cap).
			runID := fmt.Sprintf("agree-%d", i)
			runIn(t, s.Root, s.Env, "", "run", "--epic", epic, "--max-cycles", "2", "--plain", "--run-id", runID)
			var rj struct {
				Outcome state.Outcome `json:"outcome"`
				Cycles  []struct {
					Outcome state.Outcome `json:"outcome"`
				} `json:"cycles"`
			}
			b, err := os.ReadFile(filepath.Join(s.Root, ".runtasks", "runs", runID, "run.json"))
			if err == nil {
				err = json.Unmarshal(b, &rj)
			}
			if err != nil {
				t.Fatalf("run.json: %v %s", err, b)
			}
			// A complete epic ends the run before any agent starts.
			runOutcome := rj.Outcome
			if len(rj.Cycles) > 0 {
				runOutcome = rj.Cycles[0].Outcome
			}

			got := fmt.Sprintf("stop-hook %s, check %s, run %s", hook, rep.Outcome, runOutcome)
			want := fmt.Sprintf("stop-hook %s, check %s, run %s", c.want, c.want, c.want)
			if got != want {
				t.Errorf("%s\nwant %s", got, want)
			}
		})
	}
}

func writeFileMode(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
