package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
)

// fakeTracker serves a fixed epic and records which queries ran.
type fakeTracker struct {
	ready, subtree []beads.Issue
	epicMissing    bool
	err            error
	calls          []string
	// shown is what Show answers (nil: an open epic of the asked id).
	shown *beads.Issue
}

func (f *fakeTracker) Ready(_ context.Context, epic string) ([]beads.Issue, error) {
	f.calls = append(f.calls, "ready")
	return f.ready, f.err
}
func (f *fakeTracker) Subtree(_ context.Context, epic string) ([]beads.Issue, error) {
	f.calls = append(f.calls, "subtree")
	return f.subtree, f.err
}
func (f *fakeTracker) Descendants(context.Context, string) (beads.Issue, []beads.Issue, error) {
	return beads.Issue{}, nil, errors.New("fakeTracker lists no closed tasks")
}
func (f *fakeTracker) Show(_ context.Context, id string) (beads.Issue, error) {
	f.calls = append(f.calls, "show")
	if f.epicMissing {
		return beads.Issue{}, errors.New("no issues found matching the provided IDs")
	}
	if f.shown != nil {
		return *f.shown, f.err
	}
	return beads.Issue{ID: id, Status: "open", IssueType: "epic"}, f.err
}

type fakeWorkspace struct {
	dirty []string
	err   error
}

func (w fakeWorkspace) Uncommitted(context.Context) ([]string, error) { return w.dirty, w.err }

func issue(id, status string, blockedBy ...string) beads.Issue {
	return beads.Issue{ID: id, Title: "Task " + id, Status: status, BlockedBy: blockedBy,
		UpdatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
}

// epic builds a tracker: ready issues are open and appear in both queries.
func epic(ready []string, others ...beads.Issue) *fakeTracker {
	f := &fakeTracker{}
	for _, id := range ready {
		is := issue(id, "open")
		f.ready = append(f.ready, is)
		f.subtree = append(f.subtree, is)
	}
	f.subtree = append(f.subtree, others...)
	return f
}

func testConfig() *config.Config {
	return &config.Config{
		Root: "/proj",
		Workflow: config.Workflow{
			Epic: "bd-e",
			StopHook: config.StopHook{
				Enabled: true, CheckReadyTasks: true, CheckInProgress: true, MaxCycles: 50,
				AllowExitOn:             []string{config.CondAllComplete, config.CondAllBlocked, config.CondContextCheckpoint},
				CompletionPromises:      []config.Promise{{Text: "ALL TASKS COMPLETE"}, {Text: "EPIC COMPLETE"}, {Text: "BLOCKED - NEEDS USER"}, {Text: "CONTEXT LIMIT - CHECKPOINT"}},
				OnBeadsError:            "allow",
				SubagentStop:            "allow",
				CheckpointRequiresClean: true,
				NextIDs:                 3,
			},
			DoneToken:        config.DoneToken{Prefix: "TASKMASTER_DONE"},
			NoProgressCycles: 3,
		},
	}
}

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const prompt = "ORCHESTRATION PROMPT"

func TestDecide(t *testing.T) {
	type tc struct {
		name    string
		cfg     func(*config.Config)
		in      Input
		st      state.State
		tr      *fakeTracker
		ws      func(context.Context) ([]string, error)
		block   bool
		outcome state.Outcome
		calls   string // queries that must have run, in order
		reason  []string
		notIn   []string // must not be in the reason
		sysmsg  string
		cycles  int // cycles after the decision
	}
	msg := func(s string) Input { return Input{SessionID: "s1", Event: "Stop", FinalMessage: s} }
	complete := "All done.\n<promise>ALL TASKS COMPLETE</promise>"
	cases := []tc{
		{name: "no epic no contract: never touched", cfg: func(c *config.Config) { c.Workflow.Epic = "" },
			in: msg(""), tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeNotDriven, calls: ""},
		{name: "empty session id is not bound", in: Input{SessionID: "  "},
			tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeNotDriven, calls: ""},
		{name: "subagent stop allowed", in: Input{SessionID: "s1", Event: "SubagentStop", Subagent: true},
			tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeSubagent, calls: ""},
		{name: "subagent driven when configured", cfg: func(c *config.Config) { c.Workflow.StopHook.SubagentStop = "drive" },
			in: Input{SessionID: "s1", Subagent: true}, tr: epic([]string{"bd-e.1"}), block: true,
			outcome: state.OutcomeContinue, calls: "ready", cycles: 1},
		{name: "background tasks running", in: Input{SessionID: "s1", BackgroundTasks: 1},
			tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeBackground, calls: ""},
		{name: "ready work: one query decides", in: msg("I made good progress, let me know."),
			tr: epic([]string{"bd-e.1", "bd-e.2", "bd-e.3", "bd-e.4"}), block: true, outcome: state.OutcomeContinue,
			calls: "ready", reason: []string{prompt, "cycle 1/50", "4 ready (next: bd-e.1, bd-e.2, bd-e.3)"},
			notIn: []string{"bd-e.4"}, cycles: 1},
		{name: "cycle counts up", in: msg(""), st: state.State{Cycles: 7},
			tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeContinue, calls: "ready",
			reason: []string{"cycle 8/50"}, cycles: 8},
		{name: "false promise rejected while work is ready", in: msg(complete),
			tr: epic([]string{"bd-e.1", "bd-e.2", "bd-e.3", "bd-e.4"}, issue("bd-e.5", "in_progress")), block: true,
			outcome: state.OutcomeRejected, calls: "ready,subtree",
			reason: []string{"completion rejected: 5 remain", "bd-e.1 Task bd-e.1", "bd-e.3", "and 2 more", prompt}, cycles: 1},
		{name: "promise rejected while work is in progress", in: msg(complete),
			tr: epic(nil, issue("bd-e.2", "in_progress")), block: true, outcome: state.OutcomeRejected,
			calls: "ready,subtree", reason: []string{"completion rejected: 1 remain", "bd-e.2"}, cycles: 1},
		{name: "promise with only blocked work: escalation, not complete", in: msg(complete),
			tr:      epic(nil, issue("bd-e.2", "blocked"), issue("bd-e.3", "open", "bd-e.2")),
			outcome: state.OutcomeEscalated, calls: "ready,subtree", sysmsg: "needs a person: 2 task(s)"},
		{name: "promise accepted when beads agrees", in: msg(complete), st: state.State{Cycles: 4},
			tr: epic(nil), outcome: state.OutcomeComplete, calls: "ready,subtree,show", sysmsg: "epic bd-e complete"},
		{name: "EPIC COMPLETE is the same claim", in: msg("<promise>EPIC COMPLETE</promise>"),
			tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeRejected, calls: "ready,subtree", cycles: 1},
		{name: "bare phrase without tags is no claim", in: msg("ALL TASKS COMPLETE"),
			tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeContinue, calls: "ready", cycles: 1},
		{name: "claim whose condition is off is ignored",
			cfg: func(c *config.Config) { c.Workflow.StopHook.AllowExitOn = []string{config.CondAllBlocked} },
			in:  msg(complete), tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeContinue, calls: "ready", cycles: 1},
		{name: "nothing remains: complete", in: msg("bye"), tr: epic(nil),
			outcome: state.OutcomeComplete, calls: "ready,subtree,show", sysmsg: "complete"},
		{name: "unknown epic is an error, not completion", in: msg(complete), tr: &fakeTracker{epicMissing: true},
			outcome: state.OutcomeBeadsError, calls: "ready,subtree,show", sysmsg: "could not read beads"},
		{name: "in progress only: block", in: msg(""), tr: epic(nil, issue("bd-e.1", "in_progress")),
			block: true, outcome: state.OutcomeContinue, calls: "ready,subtree",
			reason: []string{"0 ready", "1 in progress", "1 remain"}, cycles: 1},
		{name: "in progress ignored when check_in_progress is off",
			cfg: func(c *config.Config) { c.Workflow.StopHook.CheckInProgress = false },
			in:  msg(""), tr: epic(nil, issue("bd-e.1", "in_progress")), outcome: state.OutcomeEscalated, calls: "ready,subtree"},
		{name: "all blocked or deferred: escalate with names", in: msg(""),
			tr:      epic(nil, issue("bd-e.1", "blocked"), issue("bd-e.2", "open", "bd-e.1"), issue("bd-e.3", "deferred")),
			outcome: state.OutcomeEscalated, calls: "ready,subtree", sysmsg: "bd-e.2 Task bd-e.2 (blocked by bd-e.1)"},
		{name: "blocked claim rejected while work is ready", in: msg("<promise>BLOCKED - NEEDS USER</promise>"),
			tr: epic([]string{"bd-e.1"}, issue("bd-e.2", "blocked")), block: true, outcome: state.OutcomeRejected,
			calls: "ready,subtree", reason: []string{"blocked claim rejected: 1 ready, 0 in progress"}, cycles: 1},
		{name: "blocked claim accepted when all is blocked", in: msg("<promise>BLOCKED - NEEDS USER</promise>"),
			tr: epic(nil, issue("bd-e.2", "blocked")), outcome: state.OutcomeEscalated, calls: "ready,subtree"},
		{name: "checkpoint with uncommitted work", in: msg("<promise>CONTEXT LIMIT - CHECKPOINT</promise>"),
			tr: epic([]string{"bd-e.1"}), ws: fakeWorkspace{dirty: []string{"a.go", "b.go"}}.Uncommitted, block: true,
			outcome: state.OutcomeRejected, calls: "ready,subtree", reason: []string{"commit your work first", "a.go, b.go"}, cycles: 1},
		{name: "checkpoint with committed work", in: msg("<promise>CONTEXT LIMIT - CHECKPOINT</promise>"), st: state.State{Cycles: 3},
			tr: epic([]string{"bd-e.1"}), ws: fakeWorkspace{}.Uncommitted, outcome: state.OutcomeCheckpoint, calls: "ready,subtree", cycles: 3},
		{name: "checkpoint outside git is not a trap", in: msg("<promise>CONTEXT LIMIT - CHECKPOINT</promise>"),
			tr: epic([]string{"bd-e.1"}), ws: fakeWorkspace{err: errors.New("not a git repository")}.Uncommitted,
			outcome: state.OutcomeCheckpoint, calls: "ready,subtree"},
		{name: "cap reached: allowed with a message, counter cleared", in: msg(""), st: state.State{Cycles: 50},
			tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeCapReached, calls: "ready", sysmsg: "max cycles reached (50/50)", cycles: 0},
		{name: "bd error allows by default", in: msg(complete), tr: &fakeTracker{err: errors.New("bd: no beads database found")},
			outcome: state.OutcomeBeadsError, calls: "ready", sysmsg: "no beads database found"},
		{name: "bd error blocks when configured", cfg: func(c *config.Config) { c.Workflow.StopHook.OnBeadsError = "block" },
			in: msg(""), tr: &fakeTracker{err: errors.New("bd timed out")}, block: true, outcome: state.OutcomeBeadsError,
			calls: "ready", reason: []string{"bd timed out"}, cycles: 1},
		{name: "bd error that blocks still meets the cap", cfg: func(c *config.Config) { c.Workflow.StopHook.OnBeadsError = "block" },
			in: msg(""), st: state.State{Cycles: 50}, tr: &fakeTracker{err: errors.New("bd timed out")}, outcome: state.OutcomeCapReached, calls: "ready"},
		{name: "max_duration spent", cfg: func(c *config.Config) { c.Workflow.MaxDuration = time.Hour },
			in: msg(""), st: state.State{Cycles: 2, FirstBlockAt: now.Add(-2 * time.Hour)}, tr: epic([]string{"bd-e.1"}),
			outcome: state.OutcomeCapReached, calls: "", sysmsg: "max_duration"},

		// The TASKMASTER_DONE contract.
		{name: "token missing, no epic", cfg: func(c *config.Config) { c.Workflow.Epic = ""; c.Workflow.DoneToken.Required = true },
			in: msg("finished I think"), tr: &fakeTracker{}, block: true, outcome: state.OutcomeTokenMissed, calls: "",
			reason: []string{"TASKMASTER (1): stop blocked", "completion checklist", "TASKMASTER_DONE, then two colons, then your session id s1"},
			notIn:  []string{"TASKMASTER_DONE::s1", prompt}, cycles: 1},
		{name: "token printed, no epic", cfg: func(c *config.Config) { c.Workflow.Epic = ""; c.Workflow.DoneToken.Required = true },
			in: msg("Done.\nTASKMASTER_DONE::s1"), st: state.State{Cycles: 2}, tr: &fakeTracker{}, outcome: state.OutcomeTokenDone, calls: ""},
		{name: "another session's token does not count", cfg: func(c *config.Config) { c.Workflow.Epic = ""; c.Workflow.DoneToken.Required = true },
			in: msg("TASKMASTER_DONE::s2"), tr: &fakeTracker{}, block: true, outcome: state.OutcomeTokenMissed, cycles: 1},
		{name: "TASKMASTER_MAX caps the contract", cfg: func(c *config.Config) {
			c.Workflow.Epic = ""
			c.Workflow.DoneToken.Required, c.Workflow.DoneToken.Max = true, 3
		}, in: msg(""), st: state.State{Cycles: 3}, tr: &fakeTracker{}, outcome: state.OutcomeCapReached},
		{name: "token label shows the max", cfg: func(c *config.Config) {
			c.Workflow.Epic = ""
			c.Workflow.DoneToken.Required, c.Workflow.DoneToken.Max = true, 5
		}, in: Input{SessionID: "s1", ToolErrors: true}, st: state.State{Cycles: 1}, tr: &fakeTracker{}, block: true,
			outcome: state.OutcomeTokenMissed, reason: []string{"TASKMASTER (2/5)", "Errors were detected"}, cycles: 2},
		{name: "token with epic: beads must agree", cfg: func(c *config.Config) { c.Workflow.DoneToken.Required = true },
			in: msg("TASKMASTER_DONE::s1"), tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeRejected,
			calls: "ready,subtree", reason: []string{"done token rejected: 1 remain"}, cycles: 1},
		{name: "token with epic, beads done", cfg: func(c *config.Config) { c.Workflow.DoneToken.Required = true },
			in: msg("TASKMASTER_DONE::s1"), tr: epic(nil), outcome: state.OutcomeTokenDone, calls: "ready,subtree,show"},
		{name: "token with epic, beads done, token missing", cfg: func(c *config.Config) { c.Workflow.DoneToken.Required = true },
			in: msg("all closed"), tr: epic(nil), block: true, outcome: state.OutcomeTokenMissed, calls: "ready,subtree,show",
			reason: []string{"beads shows bd-e complete"}, cycles: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			if c.cfg != nil {
				c.cfg(cfg)
			}
			st := c.st
			st.Session, st.Epic = "s1", cfg.Workflow.Epic
			dec, next := decideCfg(context.Background(), c.in, st, cfg, Env{Ports: Ports{Beads: c.tr, Uncommitted: c.ws}, Prompt: prompt, Now: now})
			if dec.Block != c.block || dec.Outcome != c.outcome {
				t.Fatalf("got block=%v outcome=%s (%s), want block=%v outcome=%s\nreason: %s\nsystemMessage: %s",
					dec.Block, dec.Outcome, dec.Why, c.block, c.outcome, dec.Reason, dec.SystemMessage)
			}
			if got := strings.Join(c.tr.calls, ","); got != c.calls {
				t.Errorf("bd queries: got %q, want %q", got, c.calls)
			}
			for _, s := range c.reason {
				if !strings.Contains(dec.Reason, s) {
					t.Errorf("reason lacks %q:\n%s", s, dec.Reason)
				}
			}
			for _, s := range c.notIn {
				if strings.Contains(dec.Reason, s) {
					t.Errorf("reason must not contain %q:\n%s", s, dec.Reason)
				}
			}
			if !c.block && dec.Reason != "" {
				t.Errorf("an allowed stop has a reason: %q", dec.Reason)
			}
			if c.sysmsg != "" && !strings.Contains(dec.SystemMessage, c.sysmsg) {
				t.Errorf("systemMessage %q lacks %q", dec.SystemMessage, c.sysmsg)
			}
			if next.Cycles != c.cycles {
				t.Errorf("cycles after: %d, want %d", next.Cycles, c.cycles)
			}
			if dec.Block && next.FirstBlockAt.IsZero() {
				t.Error("a block must record the first block time")
			}
		})
	}
}

// A stop that ends the loop clears the counter; blocks count; a checkpoint
// keeps the count (the session resumes).
func TestDecideCounterLifecycle(t *testing.T) {
	cfg := testConfig()
	tr := epic([]string{"bd-e.1"})
	st := state.State{Session: "s1", Epic: "bd-e"}
	for i := 1; i <= 3; i++ {
		tr.ready[0].UpdatedAt = now.Add(time.Duration(i) * time.Minute) // progress
		var dec Decision
		dec, st = decideCfg(context.Background(), Input{SessionID: "s1"}, st, cfg, Env{Ports: Ports{Beads: tr}, Prompt: prompt, Now: now})
		if !dec.Block || st.Cycles != i {
			t.Fatalf("stop %d: block=%v cycles=%d", i, dec.Block, st.Cycles)
		}
	}
	tr.ready, tr.subtree = nil, nil
	dec, st := decideCfg(context.Background(), Input{SessionID: "s1"}, st, cfg, Env{Ports: Ports{Beads: tr}, Prompt: prompt, Now: now})
	if dec.Outcome != state.OutcomeComplete || st.Cycles != 0 || st.Session != "s1" {
		t.Fatalf("complete: %s, state %+v", dec.Outcome, st)
	}
}

// The no-progress rule: unchanged beads for N blocks → one warning block,
// then the stop is allowed. A changing epic is never stopped by it.
func TestDecideNoProgress(t *testing.T) {
	cfg := testConfig()
	run := func(tr *fakeTracker, stops int, change bool) []state.Outcome {
		st := state.State{Session: "s1", Epic: "bd-e"}
		var outs []state.Outcome
		for i := 0; i < stops; i++ {
			if change {
				tr.ready[0].UpdatedAt = now.Add(time.Duration(i) * time.Second)
				tr.subtree[0].UpdatedAt = tr.ready[0].UpdatedAt
			}
			var dec Decision
			dec, st = decideCfg(context.Background(), Input{SessionID: "s1"}, st, cfg, Env{Ports: Ports{Beads: tr}, Prompt: prompt, Now: now})
			outs = append(outs, dec.Outcome)
			if !dec.Block {
				break
			}
		}
		return outs
	}
	idle := run(epic([]string{"bd-e.1"}), 10, false)
	want := []state.Outcome{state.OutcomeContinue, state.OutcomeContinue, state.OutcomeContinue, state.OutcomeContinue, state.OutcomeNoProgress, state.OutcomeNoProgress}
	if fmt.Sprint(idle) != fmt.Sprint(want) {
		t.Fatalf("idle agent: %v, want %v", idle, want)
	}
	busy := run(epic([]string{"bd-e.1"}), 20, true)
	for _, o := range busy {
		if o != state.OutcomeContinue {
			t.Fatalf("an agent changing beads was stopped: %v", busy)
		}
	}
	if len(busy) != 20 {
		t.Fatalf("busy agent stopped after %d", len(busy))
	}
	// In-progress work that changes while the ready set stands still is
	// progress: the full subtree is read to confirm before escalating.
	tr := epic([]string{"bd-e.1"}, issue("bd-e.2", "in_progress"))
	st := state.State{Session: "s1", Epic: "bd-e"}
	for i := 0; i < 12; i++ {
		tr.subtree[1].UpdatedAt = now.Add(time.Duration(i) * time.Minute)
		var dec Decision
		dec, st = decideCfg(context.Background(), Input{SessionID: "s1"}, st, cfg, Env{Ports: Ports{Beads: tr}, Prompt: prompt, Now: now})
		if dec.Outcome != state.OutcomeContinue {
			t.Fatalf("stop %d: in-progress work changing, got %s (%s)", i, dec.Outcome, dec.Why)
		}
	}
}

// The reason does not grow with the epic's size or the cycle count.
func TestReasonSizeIsConstant(t *testing.T) {
	cfg := testConfig()
	size := func(n, cycle int) int {
		var ids []string
		for i := 0; i < n; i++ {
			ids = append(ids, fmt.Sprintf("bd-e.%d", i+1))
		}
		dec, _ := decideCfg(context.Background(), Input{SessionID: "s1"}, state.State{Cycles: cycle}, cfg,
			Env{Ports: Ports{Beads: epic(ids)}, Prompt: prompt, Now: now})
		return len(dec.Reason)
	}
	small, big, late := size(3, 0), size(1000, 0), size(1000, 48)
	if d := big - small; d < 0 || d > 16 {
		t.Errorf("3 tasks: %d bytes, 1000 tasks: %d bytes", small, big)
	}
	if d := late - big; d < 0 || d > 4 {
		t.Errorf("cycle 1: %d bytes, cycle 49: %d bytes", big, late)
	}
}

// decideCfg is Decide with the epic resolved as Stop resolves it for a
// session without a binding: the configuration's.
func decideCfg(ctx context.Context, in Input, st state.State, cfg *config.Config, env Env) (Decision, state.State) {
	if in.Epic == "" {
		in.Epic = cfg.Workflow.Epic
	}
	return Decide(ctx, in, st, cfg, env)
}

// A next_ids beyond any epic's size names what there is: no allocation of
// the configured size (9223372036854775807 once panicked in makeslice).
func TestNextIDsHuge(t *testing.T) {
	for _, n := range []int{1 << 32, int(^uint(0) >> 1)} {
		cfg := testConfig()
		cfg.Workflow.StopHook.NextIDs = n
		dec, _ := decideCfg(context.Background(), Input{SessionID: "s1"}, state.State{}, cfg, Env{Ports: Ports{Beads: epic([]string{"bd-e.1", "bd-e.2"})}, Prompt: prompt, Now: now})
		if !strings.Contains(dec.Reason, "2 ready (next: bd-e.1, bd-e.2)") {
			t.Errorf("next_ids %d: %q", n, dec.Reason)
		}
	}
}

// racingTracker answers Ready from a list that changes after the first
// call: another agent closed a blocker between the stop's two reads.
type racingTracker struct {
	*fakeTracker
	later []beads.Issue
}

func (r *racingTracker) Ready(ctx context.Context, epic string) ([]beads.Issue, error) {
	ready, err := r.fakeTracker.Ready(ctx, epic)
	r.fakeTracker.ready = r.later
	return ready, err
}

// Seen with runtasks run --workers: the ready read found nothing (x.5
// waited for x.4, in progress elsewhere); x.4 closed before the subtree
// read, which shows x.5 open and unblocked. That is work, not an epic
// blocked: the stop asks again and goes on. When bd still lists nothing
// ready, the stop is escalated as before (one extra read, no loop).
func TestDecideReadsRacingAChange(t *testing.T) {
	x5 := issue("x.5", "open")
	for _, tc := range []struct {
		name  string
		later []beads.Issue
		want  state.Outcome
		block bool
	}{
		{"ready on the second read", []beads.Issue{x5}, state.OutcomeContinue, true},
		{"still nothing ready", nil, state.OutcomeEscalated, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &racingTracker{fakeTracker: &fakeTracker{subtree: []beads.Issue{x5}}, later: tc.later}
			dec, _ := Decide(context.Background(), Input{SessionID: "s", Epic: "x"}, state.State{}, testConfig(),
				Env{Ports: Ports{Beads: tr}, Now: now, Prompt: "P"})
			if dec.Outcome != tc.want || dec.Block != tc.block || !slices.Equal(tr.calls, []string{"ready", "subtree", "ready"}) {
				t.Errorf("outcome %s block %v (%s); want %s block %v; calls %v", dec.Outcome, dec.Block, dec.Why, tc.want, tc.block, tr.calls)
			}
		})
	}
}

// The TASKMASTER_DONE contract without an epic, as taskmaster's own tests
// specify it: with TASKMASTER_MAX=3 a turn blocks 1/3, 2/3, 3/3, then the
// stop is allowed and the counter cleared, and the next turn starts again
// at 1/3; the done line allows the stop and clears the counter, and the
// next stop without it blocks at 1/MAX. Enforcement never ends for the
// session.
func TestTaskmasterTurns(t *testing.T) {
	const done = "All verified.\nTASKMASTER_DONE::s1"
	type step struct {
		msg  string
		want string // the block's label, "" for an allowed stop
	}
	for _, tc := range []struct {
		name  string
		max   int
		steps []step
	}{
		{"the cap allows one stop, the next turn starts at 1/3", 3, []step{
			{"working", "TASKMASTER (1/3)"}, {"working", "TASKMASTER (2/3)"}, {"working", "TASKMASTER (3/3)"},
			{"working", ""},
			{"next turn", "TASKMASTER (1/3)"}, {"next turn", "TASKMASTER (2/3)"}, {"next turn", "TASKMASTER (3/3)"},
			{"next turn", ""},
			{"third turn", "TASKMASTER (1/3)"},
		}},
		{"the done line allows the stop and clears the counter", 3, []step{
			{"working", "TASKMASTER (1/3)"}, {"working", "TASKMASTER (2/3)"},
			{done, ""},
			{"next turn", "TASKMASTER (1/3)"},
			{done, ""},
			{done, ""},
			{"next turn", "TASKMASTER (1/3)"}, {"next turn", "TASKMASTER (2/3)"}, {"next turn", "TASKMASTER (3/3)"},
			{"next turn", ""},
		}},
		{"the done line at the first stop of a turn", 3, []step{
			{done, ""}, {"idle", "TASKMASTER (1/3)"}, {done, ""}, {"idle", "TASKMASTER (1/3)"},
		}},
		{"uncapped: the done line still ends only the turn", 0, []step{
			{"working", "TASKMASTER (1)"}, {"working", "TASKMASTER (2)"}, {done, ""}, {"idle", "TASKMASTER (1)"},
		}},
		{"TASKMASTER_MAX=1", 1, []step{
			{"idle", "TASKMASTER (1/1)"}, {"idle", ""}, {"idle", "TASKMASTER (1/1)"}, {"idle", ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Workflow.Epic = ""
			cfg.Workflow.DoneToken.Required, cfg.Workflow.DoneToken.Max = true, tc.max
			st := state.State{Session: "s1", Epic: state.NoEpic}
			for i, s := range tc.steps {
				var dec Decision
				dec, st = Decide(context.Background(), Input{SessionID: "s1", Event: "Stop", FinalMessage: s.msg}, st, cfg,
					Env{Ports: Ports{Beads: &fakeTracker{}}, Now: now.Add(time.Duration(i) * time.Minute)})
				if dec.Block != (s.want != "") {
					t.Fatalf("stop %d (%q): block=%v outcome=%s (%s), want label %q", i+1, s.msg, dec.Block, dec.Outcome, dec.Why, s.want)
				}
				if s.want != "" && !strings.HasPrefix(dec.Reason, s.want+": stop blocked") {
					t.Fatalf("stop %d: reason %q, want it to start with %q", i+1, dec.Reason, s.want)
				}
				if !dec.Block {
					if st.Cycles != 0 || st.Ended != "" {
						t.Fatalf("stop %d allowed (%s): cycles %d, ended %q: the turn must end, not the session", i+1, dec.Outcome, st.Cycles, st.Ended)
					}
					if want := map[bool]state.Outcome{true: state.OutcomeTokenDone, false: state.OutcomeCapReached}[s.msg == done]; dec.Outcome != want {
						t.Fatalf("stop %d: outcome %s, want %s", i+1, dec.Outcome, want)
					}
				}
			}
		})
	}
}

// With an epic, the done line that beads confirms ends the loop for good
// (the binding is released by Stop); a spent budget does without one too.
func TestTaskmasterEpicEndsForGood(t *testing.T) {
	cfg := testConfig()
	cfg.Workflow.DoneToken.Required = true
	dec, st := decideCfg(context.Background(), Input{SessionID: "s1", FinalMessage: "TASKMASTER_DONE::s1"},
		state.State{Session: "s1", Epic: "bd-e"}, cfg, Env{Ports: Ports{Beads: epic(nil)}, Prompt: prompt, Now: now})
	if dec.Outcome != state.OutcomeTokenDone || st.Ended != state.OutcomeTokenDone {
		t.Fatalf("epic, token and beads agree: %s, ended %q", dec.Outcome, st.Ended)
	}
}

// A session driven for a task (/run-tasks <task id>) is done when that task
// is closed itself, never before: its epic's other tasks, closed or not,
// do not count, and the session is never told "complete" while it is open.
func TestDecideTask(t *testing.T) {
	task := func(status string, deps ...beads.Dependency) *fakeTracker {
		is := issue("bd-e.1", status)
		is.IssueType, is.Dependencies = "task", deps
		return &fakeTracker{shown: &is}
	}
	blocker := beads.Dependency{IssueID: "bd-e.1", DependsOnID: "bd-e.9", Type: beads.DepBlocks, Status: "open"}
	doneBlocker := beads.Dependency{IssueID: "bd-e.1", DependsOnID: "bd-e.9", Type: beads.DepBlocks, Status: "closed"}
	parent := beads.Dependency{IssueID: "bd-e.1", DependsOnID: "bd-e", Type: beads.DepParentChild, Status: "open"}
	complete := "All done.\n<promise>ALL TASKS COMPLETE</promise>"
	for _, tc := range []struct {
		name    string
		tr      *fakeTracker
		msg     string
		block   bool
		outcome state.Outcome
		reason  []string
		sysmsg  string
	}{
		{name: "open task: blocked with the task's prompt", tr: task("open", parent, doneBlocker), msg: "Done for now.", block: true,
			outcome: state.OutcomeContinue, reason: []string{"You work on beads task bd-e.1 until it is closed", "1 ready (next: bd-e.1)", "1 remain"}},
		{name: "in progress: blocked", tr: task("in_progress"), msg: "Done for now.", block: true,
			outcome: state.OutcomeContinue, reason: []string{"1 in progress", "bd show bd-e.1"}},
		{name: "a false completion promise is rejected", tr: task("in_progress"), msg: complete, block: true,
			outcome: state.OutcomeRejected, reason: []string{"1 remain", "bd-e.1 Task bd-e.1 [in_progress]"}},
		{name: "closed: complete, said as the task's", tr: task("closed"), msg: "Done.", outcome: state.OutcomeComplete,
			sysmsg: "runtasks: task bd-e.1 is closed."},
		{name: "closed, promise confirmed", tr: task("closed"), msg: complete, outcome: state.OutcomeComplete, sysmsg: "task bd-e.1 is closed"},
		{name: "blocked by an open task: needs a person", tr: task("open", blocker), msg: "Done.", outcome: state.OutcomeEscalated,
			sysmsg: "bd-e.1 Task bd-e.1 (blocked by bd-e.9)"},
		{name: "stored status blocked: needs a person", tr: task("blocked"), msg: "Done.", outcome: state.OutcomeEscalated},
		{name: "deferred: needs a person", tr: task("deferred"), msg: "Done.", outcome: state.OutcomeEscalated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{SessionID: "s1", Epic: "bd-e.1", FinalMessage: tc.msg}
			dec, next := Decide(context.Background(), in, state.State{Session: "s1", Epic: "bd-e.1"}, testConfig(),
				Env{Ports: Ports{Beads: tc.tr}, Prompt: prompt, Now: now})
			if dec.Block != tc.block || dec.Outcome != tc.outcome {
				t.Fatalf("got block=%v %s (%s), want block=%v %s\nreason: %s\nsystemMessage: %s",
					dec.Block, dec.Outcome, dec.Why, tc.block, tc.outcome, dec.Reason, dec.SystemMessage)
			}
			if got := strings.Join(tc.tr.calls, ","); got != "ready,subtree,show" {
				t.Errorf("bd queries: %s", got)
			}
			for _, s := range tc.reason {
				if !strings.Contains(dec.Reason, s) {
					t.Errorf("reason lacks %q:\n%s", s, dec.Reason)
				}
			}
			if dec.Block && strings.Contains(dec.Reason, prompt) {
				t.Errorf("a task is fed the task's prompt, not the epic's orchestration prompt:\n%s", dec.Reason)
			}
			if !strings.Contains(dec.SystemMessage, tc.sysmsg) || (tc.outcome != state.OutcomeComplete && strings.Contains(dec.SystemMessage, "complete")) {
				t.Errorf("systemMessage %q, want %q and no word of completion", dec.SystemMessage, tc.sysmsg)
			}
			if (next.Ended != "") != (tc.outcome == state.OutcomeComplete) {
				t.Errorf("ended %q after %s", next.Ended, dec.Outcome)
			}
		})
	}
}

// An epic whose tasks are all closed is complete although the epic itself
// is still open (it is closed by bd epic close-eligible, not worked on).
func TestDecideEpicCompleteWhileItselfOpen(t *testing.T) {
	dec, _ := decideCfg(context.Background(), Input{SessionID: "s1"}, state.State{}, testConfig(), Env{Ports: Ports{Beads: epic(nil)}, Prompt: prompt, Now: now})
	if dec.Outcome != state.OutcomeComplete || !strings.Contains(dec.SystemMessage, "epic bd-e complete") {
		t.Fatalf("%s: %s", dec.Outcome, dec.SystemMessage)
	}
}
