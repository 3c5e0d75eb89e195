package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/state"
)

// The checkpoint promise ignores runtasks' own files: a repository whose
// .gitignore does not cover .runtasks/, run folders or .worktrees/ shows
// them in git status, and they are not the agent's work.
func TestCheckpointIgnoresOwnFiles(t *testing.T) {
	tests := []struct {
		name    string
		dirty   []string
		outcome state.Outcome
		names   string // the uncommitted paths the rejection names
	}{
		{"only runtasks' files", []string{".runtasks/", "runs/", ".worktrees/"}, state.OutcomeCheckpoint, ""},
		{"the state dir's files one by one", []string{".runtasks/decisions.jsonl", ".runtasks/state/s1.json"}, state.OutcomeCheckpoint, ""},
		{"the agent's work beside them", []string{".runtasks/", "src/a.go"}, state.OutcomeRejected, "(1 uncommitted: src/a.go)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Workflow.Worktrees.Pattern = ".worktrees/agent-{id}"
			in := Input{SessionID: "s1", Event: "Stop", FinalMessage: "<promise>CONTEXT LIMIT - CHECKPOINT</promise>"}
			st := state.State{Session: "s1", Epic: cfg.Workflow.Epic}
			dec, _ := decideCfg(context.Background(), in, st, cfg, Env{Ports: Ports{Beads: epic([]string{"bd-e.1"}), Uncommitted: fakeWorkspace{dirty: tt.dirty}.Uncommitted}, Prompt: prompt, Now: now})
			if dec.Outcome != tt.outcome {
				t.Fatalf("outcome %s (%s), want %s", dec.Outcome, dec.Why, tt.outcome)
			}
			if tt.names != "" && !strings.Contains(dec.Why, tt.names) {
				t.Errorf("why %q lacks %q", dec.Why, tt.names)
			}
		})
	}
}
