package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/state"
)

// TestAuditApply: how a failed audit changes the stop's decision under
// each on_unverified, and that limits still hold.
func TestAuditApply(t *testing.T) {
	failed := []string{Verification{Task: beads.Issue{ID: "x.2"}, Verdict: Verdict{Status: VerdictIncomplete, Summary: "tests: `make` failed (exit 1)"}}.Failure()}
	for _, tc := range []struct {
		name, mode string
		reopened   []string
		dec        Decision
		cycles     int
		block      bool
		outcome    state.Outcome
		message    bool
	}{
		{"reopen: the block carries the failure", "reopen", []string{"x.2"}, Decision{Block: true, Outcome: state.OutcomeContinue, Reason: "prompt"}, 1, true, state.OutcomeReopened, false},
		{"block: a complete epic is blocked", "block", nil, Decision{Outcome: state.OutcomeComplete}, 1, true, state.OutcomeUnverified, false},
		{"block: an escalation is blocked", "block", nil, Decision{Outcome: state.OutcomeEscalated}, 1, true, state.OutcomeUnverified, false},
		{"block: at the cap the stop is allowed", "block", nil, Decision{Outcome: state.OutcomeComplete, Max: 3}, 2, false, state.OutcomeComplete, true},
		{"warn: a message only", "warn", nil, Decision{Outcome: state.OutcomeComplete}, 1, false, state.OutcomeComplete, true},
		{"warn: a block stays as it was", "warn", nil, Decision{Block: true, Outcome: state.OutcomeContinue}, 1, true, state.OutcomeContinue, true},
	} {
		cfg := config.Defaults()
		cfg.Workflow.Verify.OnUnverified = tc.mode
		a := audit{failed: failed, reopened: tc.reopened}
		next := state.State{Cycles: 9}
		dec := a.apply(&cfg, tc.dec, &next, state.State{Cycles: tc.cycles})
		if dec.Block != tc.block || dec.Outcome != tc.outcome || (dec.SystemMessage != "") != tc.message {
			t.Errorf("%s: block %v outcome %s message %q", tc.name, dec.Block, dec.Outcome, dec.SystemMessage)
		}
		if tc.block && tc.mode != "warn" && !strings.Contains(dec.Reason, "x.2: checks failed: tests") {
			t.Errorf("%s: reason %q lacks the failure", tc.name, dec.Reason)
		}
		if tc.outcome == state.OutcomeUnverified && next.Cycles != tc.cycles+1 {
			t.Errorf("%s: cycles %d, want %d", tc.name, next.Cycles, tc.cycles+1)
		}
	}
	// The block keeps the loop's cap as the decision had it (MaxCycles:
	// here the done token's 3 under max_cycles 50), not max_cycles alone.
	cfg := config.Defaults()
	cfg.Workflow.StopHook.MaxCycles = 50
	dec := audit{failed: failed}.apply(&cfg, Decision{Outcome: state.OutcomeComplete, Max: 3}, &state.State{}, state.State{Cycles: 1})
	if !dec.Block || dec.Max != 3 || dec.Cycle != 2 {
		t.Errorf("under a cap of 3: block %v cycle %d/%d", dec.Block, dec.Cycle, dec.Max)
	}
}

func TestVerifyChecks(t *testing.T) {
	cfg := config.Defaults()
	tests := config.CheckSpec{Type: "command", Name: "tests", Run: "make test"}
	readme := config.CheckSpec{Type: "files", Name: "readme", Paths: []string{"README.md"}}
	cfg.Workflow.Verify.Checks = []config.CheckSpec{tests}
	cfg.Workflow.Verify.Overrides = []config.VerifyOverride{{IssueType: "chore", Checks: []config.CheckSpec{}}, {Label: "docs", Checks: []config.CheckSpec{readme}}}
	names := func(is beads.Issue) string {
		var out []string
		for _, s := range VerifyChecks(&cfg, is) {
			out = append(out, s.Name+":"+s.Run)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		is   beads.Issue
		want string
	}{
		{beads.Issue{ID: "a", IssueType: "task"}, "tests:make test"},
		{beads.Issue{ID: "b", IssueType: "chore", Labels: []string{"docs"}}, ""},
		{beads.Issue{ID: "c", IssueType: "task", Labels: []string{"x", "docs"}}, "readme:"},
		{beads.Issue{ID: "d", Metadata: []byte(`{"verify":"go test ./d","other":1}`)}, "tests:make test,task d:go test ./d"},
		{beads.Issue{ID: "e", Labels: []string{"docs"}, Metadata: []byte(`{"verify":"true"}`)}, "readme:,task e:true"},
		{beads.Issue{ID: "f", Metadata: []byte(`{"verify":42}`)}, "tests:make test"},
	} {
		cfg.Workflow.Verify.TaskCommands = true
		if got := names(tc.is); got != tc.want {
			t.Errorf("%s: checks %q, want %q", tc.is.ID, got, tc.want)
		}
		// Without task_commands, what the store says is never run.
		cfg.Workflow.Verify.TaskCommands = false
		if got := names(tc.is); strings.Contains(got, "task "+tc.is.ID) {
			t.Errorf("%s without task_commands: checks %q", tc.is.ID, got)
		}
	}
	if len(cfg.Workflow.Verify.Checks) != 1 {
		t.Errorf("VerifyChecks changed the configuration: %v", cfg.Workflow.Verify.Checks)
	}
}

// closedTracker lists closed tasks under the epic.
type closedTracker struct {
	*fakeTracker
	closed []beads.Issue
}

func (c closedTracker) Descendants(context.Context, string) (beads.Issue, []beads.Issue, error) {
	return beads.Issue{}, c.closed, nil
}

// The audit places every closed task with one git worktree list, however
// many tasks it checks.
func TestAuditListsWorktreesOnce(t *testing.T) {
	cfg := config.Defaults()
	cfg.Root = t.TempDir() // no README.md: each task fails its check
	cfg.Workflow.Verify.Checks = []config.CheckSpec{{Type: "files", Name: "readme", Paths: []string{"README.md"}}}
	var closed []beads.Issue
	for _, id := range []string{"e.1", "e.2", "e.3"} {
		closed = append(closed, beads.Issue{ID: id, Status: beads.StatusClosed, ClosedAt: now.Add(-time.Minute)})
	}
	lists := 0
	p := Ports{Beads: closedTracker{epic(nil), closed}, Now: func() time.Time { return now },
		Worktrees: func(context.Context) ([]git.Worktree, error) {
			lists++
			return []git.Worktree{{Path: cfg.Root, Head: "abc"}}, nil
		}}
	a := runAudit(context.Background(), &state.Store{Dir: t.TempDir()}, &cfg, Input{SessionID: "s", Epic: "e"}, state.State{}, time.Time{}, Env{Ports: p, Now: now})
	if len(a.failed)+a.deferred != 3 || len(a.failed) == 0 {
		t.Fatalf("audit: %d failed, %d deferred; want the 3 closed tasks", len(a.failed), a.deferred)
	}
	if lists != 1 {
		t.Errorf("git worktree list ran %d times for %d tasks", lists, len(closed))
	}
}
