package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/state"
)

func TestClassifyInProgress(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cfg := testConfig()
	cfg.Workflow.StuckAfter = 2 * time.Hour
	cfg.Workflow.StuckAction = StuckBlock
	cfg.Workflow.Worktrees.Pattern = ".worktrees/agent-{id}"
	main := git.Worktree{Path: "/proj", Branch: "main"}
	wip := func(id string, started time.Duration, lease time.Duration) beads.Issue {
		is := issue(id, beads.StatusInProgress)
		if started > 0 {
			is.StartedAt = now.Add(-started)
		}
		if lease != 0 {
			is.LeaseExpiresAt = now.Add(lease)
		}
		return is
	}
	tests := []struct {
		name    string
		is      beads.Issue
		wts     []git.Worktree
		mine    []state.ClaimedRun
		seen    []string
		live    bool
		stuck   string // reason substring; "" = neither stuck nor live
		reclaim bool   // an expired lease: given back (reopen, bd reclaim)
	}{
		{name: "worktree by path", is: wip("x.1", time.Minute, 0), wts: []git.Worktree{main, {Path: "/proj/.worktrees/agent-x.1"}}, live: true},
		{name: "worktree by branch", is: wip("x.1", time.Minute, 0), wts: []git.Worktree{main, {Path: "/elsewhere/w1", Branch: "agent-x.1"}}, live: true},
		{name: "worktree under a symlinked root", is: wip("x.1", time.Minute, 0), wts: []git.Worktree{main, {Path: "/real/proj/.worktrees/agent-x.1"}}, live: true},
		{name: "prunable worktree is gone", is: wip("x.1", time.Minute, 0), wts: []git.Worktree{main, {Path: "/proj/.worktrees/agent-x.1", Prunable: true}}, stuck: "is gone"},
		{name: "gone while others exist", is: wip("x.1", time.Minute, 0), wts: []git.Worktree{main, {Path: "/proj/.worktrees/agent-x.2"}}, stuck: "worktree .worktrees/agent-x.1 is gone"},
		{name: "gone after being seen", is: wip("x.1", time.Minute, 0), wts: []git.Worktree{main}, seen: []string{"x.1"}, stuck: "is gone"},
		{name: "no worktrees in use: fresh task waits", is: wip("x.1", time.Minute, 0), wts: []git.Worktree{main}},
		{name: "worktrees unknown: not gone", is: wip("x.1", time.Minute, 0), wts: nil, seen: []string{"x.1"}},
		{name: "lease expired, lone agent on the main tree keeps its task", is: wip("x.1", time.Minute, -time.Second), wts: []git.Worktree{main}},
		{name: "lease running, lone agent", is: wip("x.1", time.Minute, time.Minute), wts: []git.Worktree{main}, live: true},
		{name: "lease running, worktree gone: held elsewhere", is: wip("x.1", time.Minute, time.Minute), wts: []git.Worktree{main, {Path: "/proj/.worktrees/agent-x.2"}}, seen: []string{"x.1"}, live: true},
		{name: "lease running but started too long ago", is: wip("x.1", 3*time.Hour, time.Minute), wts: []git.Worktree{main}, stuck: "started 3h ago"},
		{name: "lease expired, worktree gone", is: wip("x.1", time.Minute, -time.Second), wts: []git.Worktree{main, {Path: "/proj/.worktrees/agent-x.2"}}, stuck: "is gone", reclaim: true},
		{name: "lease expired but worktree live", is: wip("x.1", time.Minute, -time.Minute), wts: []git.Worktree{main, {Path: "/proj/.worktrees/agent-x.1"}}, live: true},
		{name: "started too long ago", is: wip("x.1", 3*time.Hour, 0), wts: []git.Worktree{main}, stuck: "started 3h ago (stuck_after 2h)"},
		{name: "started too long ago, worktree live", is: wip("x.1", 3*time.Hour, 0), wts: []git.Worktree{main, {Path: "/proj/.worktrees/agent-x.1"}}, stuck: "started 3h ago"},
		{name: "claimed by this session", is: wip("x.1", 3*time.Hour, -time.Hour), wts: []git.Worktree{main}, mine: []state.ClaimedRun{{Task: "x.1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, stuck := ClassifyInProgress([]beads.Issue{tt.is}, tt.wts, tt.mine, tt.seen, cfg, now)
			if (len(live) == 1) != tt.live {
				t.Errorf("live = %+v, want live %v", live, tt.live)
			}
			switch {
			case tt.stuck == "" && len(stuck) > 0:
				t.Errorf("stuck = %+v, want none", stuck)
			case tt.stuck != "" && tt.reclaim && (len(stuck) != 1 || !strings.Contains(stuck[0].Reason, tt.stuck) || stuck[0].Action != StuckReopen || !stuck[0].Reclaim):
				t.Errorf("stuck = %+v, want one reclaim with %q", stuck, tt.stuck)
			case tt.stuck != "" && !tt.reclaim && (len(stuck) != 1 || !strings.Contains(stuck[0].Reason, tt.stuck) || stuck[0].Action != StuckBlock || stuck[0].Reclaim):
				t.Errorf("stuck = %+v, want one block with %q", stuck, tt.stuck)
			}
		})
	}
	// Without a worktree pattern, an expired lease is what tells a dead
	// sub-agent's task where worktrees are in use.
	noPattern := *cfg
	noPattern.Workflow.Worktrees.Pattern = ""
	_, stuck := ClassifyInProgress([]beads.Issue{wip("x.1", time.Minute, -time.Second)},
		[]git.Worktree{main, {Path: "/elsewhere/w9"}}, nil, nil, &noPattern, now)
	if len(stuck) != 1 || !strings.Contains(stuck[0].Reason, "bd lease expired at 2026-11-22T11:59:59Z") {
		t.Errorf("lease expired with worktrees in use: stuck = %+v, want the lease reason", stuck)
	}
}

type fakeWorktrees []git.Worktree

func (f fakeWorktrees) Worktrees(context.Context) ([]git.Worktree, error) { return f, nil }

// TestDecideStuck: the engine's view of the subtree after each action.
func TestDecideStuck(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	wts := fakeWorktrees{{Path: "/proj"}, {Path: "/proj/.worktrees/agent-e.9"}}
	for _, tt := range []struct {
		action  string
		outcome state.Outcome
		block   bool
	}{
		{StuckBlock, state.OutcomeEscalated, false},
		{StuckReport, state.OutcomeEscalated, false},
		{StuckReopen, state.OutcomeContinue, true},
	} {
		t.Run(tt.action, func(t *testing.T) {
			cfg := testConfig()
			cfg.Workflow.StuckAction = tt.action
			cfg.Workflow.Worktrees.Pattern = ".worktrees/agent-{id}"
			tr := epic(nil, issue("e.1", beads.StatusInProgress), issue("e.2", beads.StatusOpen, "e.1"))
			dec, st := decideCfg(context.Background(), Input{SessionID: "s"}, state.State{}, cfg, Env{Ports: Ports{Beads: tr, Worktrees: wts.Worktrees}, Now: now, Prompt: "P"})
			if dec.Outcome != tt.outcome || dec.Block != tt.block {
				t.Fatalf("decision %s block=%v, want %s block=%v (%s)", dec.Outcome, dec.Block, tt.outcome, tt.block, dec.Why)
			}
			if len(dec.Stuck) != 1 || dec.Stuck[0].ID != "e.1" || dec.Stuck[0].Action != tt.action {
				t.Fatalf("stuck = %+v", dec.Stuck)
			}
			if !strings.Contains(dec.Why, "stuck") || (!dec.Block && !strings.Contains(dec.SystemMessage, "e.1")) || (dec.Block && !strings.Contains(dec.Reason, "e.1")) {
				t.Fatalf("the stuck task is not named: %+v", dec)
			}
			if tt.block && st.Cycles != 1 {
				t.Fatalf("cycles = %d", st.Cycles)
			}
		})
	}
	// A live worktree: block and tell the orchestrator to wait and merge.
	cfg := testConfig()
	cfg.Workflow.Worktrees.Pattern = ".worktrees/agent-{id}"
	tr := epic(nil, issue("e.9", beads.StatusInProgress))
	dec, st := decideCfg(context.Background(), Input{SessionID: "s"}, state.State{}, cfg, Env{Ports: Ports{Beads: tr, Worktrees: wts.Worktrees}, Now: now, Prompt: "P"})
	if !dec.Block || len(dec.Stuck) != 0 || !strings.Contains(dec.Reason, "e.9 in /proj/.worktrees/agent-e.9") || !strings.Contains(dec.Reason, "merge") {
		t.Fatalf("live worktree: %+v", dec)
	}
	if len(st.Worktrees) != 1 || st.Worktrees[0] != "e.9" {
		t.Fatalf("seen worktrees = %v", st.Worktrees)
	}
	// Ready work: no stuck detection at all (the worktrees are not listed).
	tr = epic([]string{"e.2"}, issue("e.1", beads.StatusInProgress))
	dec, _ = decideCfg(context.Background(), Input{SessionID: "s"}, state.State{}, cfg, Env{Ports: Ports{Beads: tr, Worktrees: fakeWorktrees{{Path: "/proj"}, {Path: "/x"}}.Worktrees}, Now: now, Prompt: "P"})
	if len(dec.Stuck) != 0 {
		t.Fatalf("stuck with ready work: %+v", dec.Stuck)
	}
}

type recUpdater struct{ calls []string }

func (r *recUpdater) Reclaim(_ context.Context, ids ...string) ([]string, error) {
	r.calls = append(r.calls, "reclaim "+strings.Join(ids, " "))
	return ids, nil
}

func (r *recUpdater) SetStatus(_ context.Context, id, status string) (beads.Issue, error) {
	r.calls = append(r.calls, "status "+id+" "+status)
	return beads.Issue{ID: id}, nil
}
func (r *recUpdater) AppendNotes(_ context.Context, id, text string) (beads.Issue, error) {
	r.calls = append(r.calls, "notes "+id+" "+text)
	return beads.Issue{ID: id}, nil
}

func TestApplyStuck(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	u := &recUpdater{}
	var lines []string
	for _, st := range []StuckTask{
		{ID: "a", Reason: "worktree gone", Action: StuckBlock},
		{ID: "b", Reason: "lease expired", Action: StuckReopen},
		{ID: "c", Reason: "old", Action: StuckReport},
	} {
		lines = append(lines, applyStuck(context.Background(), u, st, now))
	}
	want := []string{"status a blocked", "notes a Agent exited without completing (runtasks, 2026-11-22T12:00:00Z): worktree gone.",
		"status b open", "notes b Agent exited without completing (runtasks, 2026-11-22T12:00:00Z): lease expired."}
	if strings.Join(u.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls:\n%v\nwant\n%v", u.calls, want)
	}
	if len(lines) != 3 || !strings.Contains(lines[2], "reported, not changed") || !strings.Contains(lines[0], "status set to blocked") {
		t.Fatalf("lines = %v", lines)
	}

	// An expired lease is given back with bd reclaim (it clears the
	// assignee; a status change alone would keep others from claiming).
	r := &recUpdater{}
	for _, st := range []StuckTask{
		{ID: "d", Reason: "bd lease expired at X", Action: StuckReopen, Reclaim: true},
		{ID: "e", Reason: "worktree gone", Action: StuckReopen},
	} {
		applyStuck(context.Background(), r, st, now)
	}
	want = []string{"reclaim d", "notes d Agent exited without completing (runtasks, 2026-11-22T12:00:00Z): bd lease expired at X.",
		"status e open", "notes e Agent exited without completing (runtasks, 2026-11-22T12:00:00Z): worktree gone."}
	if strings.Join(r.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls:\n%v\nwant\n%v", r.calls, want)
	}
}

// TestStopAppliesStuck: Stop carries out a stuck task's action through
// Ports.Updater and records what it did, one "<id> stuck (<reason>): …"
// line each (the report reads that shape).
func TestStopAppliesStuck(t *testing.T) {
	cfg := testConfig()
	cfg.Workflow.StuckAction = StuckBlock
	cfg.Workflow.Worktrees.Pattern = ".worktrees/agent-{id}"
	u := &recUpdater{}
	p := stopPorts(epic(nil, issue("e.1", beads.StatusInProgress), issue("e.2", beads.StatusOpen, "e.1")))
	p.Worktrees, p.Updater = fakeWorktrees{{Path: "/proj"}, {Path: "/proj/.worktrees/agent-e.9"}}.Worktrees, u
	dec, err := Stop(context.Background(), &state.Store{Dir: t.TempDir()}, cfg, StopRequest{Input: Input{SessionID: "s"}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(dec.Actions) != 1 || !strings.HasPrefix(dec.Actions[0], "e.1 stuck (") || !strings.HasSuffix(dec.Actions[0], "): status set to blocked, note appended") {
		t.Fatalf("actions = %q", dec.Actions)
	}
	if len(u.calls) != 2 || u.calls[0] != "status e.1 blocked" {
		t.Fatalf("calls = %q", u.calls)
	}
}
