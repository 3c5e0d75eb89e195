package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// The engine owns every end rule of every entry point: the cap, max
// duration (and the deadline a driver may stop an agent at), the context
// checkpoint (and, under runtasks run, the fresh cycle after it), the
// budget, no progress and escalation. Each decision carries the loop's one
// count and cap, an ending one the count the loop ended at.
func TestEndRules(t *testing.T) {
	checkpoint := "<promise>CONTEXT LIMIT - CHECKPOINT</promise>"
	tests := []struct {
		name    string
		cfg     func(*config.Config)
		event   string // "" = Stop (a hook)
		final   string
		st      state.State
		tr      *fakeTracker
		block   bool
		outcome state.Outcome
		fresh   bool
		cycle   int           // the decision's count
		max     int           // the decision's cap
		after   int           // the state's count after it
		ended   state.Outcome // the state's Ended after it
		dl      time.Duration // the deadline, from now (0: none)
		reason  string        // in the reason
	}{
		{name: "a block counts", st: state.State{Cycles: 7}, tr: epic([]string{"bd-e.1"}),
			block: true, outcome: state.OutcomeContinue, cycle: 8, max: 50, after: 8, reason: "cycle 8/50"},
		{name: "a run's block counts the same", event: EventRun, st: state.State{Cycles: 7}, tr: epic([]string{"bd-e.1"}),
			block: true, outcome: state.OutcomeContinue, cycle: 8, max: 50, after: 8, reason: "cycle 8/50"},
		{name: "cap: the count it ended at", st: state.State{Cycles: 50}, tr: epic([]string{"bd-e.1"}),
			outcome: state.OutcomeCapReached, cycle: 50, max: 50, after: 0, ended: state.OutcomeCapReached},
		{name: "a run's cap is the hook's", event: EventRun, cfg: func(c *config.Config) { c.Workflow.StopHook.MaxCycles = 2 },
			st: state.State{Cycles: 2}, tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeCapReached, cycle: 2, max: 2, ended: state.OutcomeCapReached},
		{name: "the done-token cap is the loop's when lower", cfg: func(c *config.Config) {
			c.Workflow.DoneToken.Required, c.Workflow.DoneToken.Max = true, 3
		}, st: state.State{Cycles: 1}, tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeTokenMissed, cycle: 2, max: 3, after: 2},
		{name: "first block: the deadline starts", cfg: func(c *config.Config) { c.Workflow.MaxDuration = time.Hour },
			event: EventRun, tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeContinue, cycle: 1, max: 50, after: 1, dl: time.Hour},
		{name: "later blocks keep the deadline", cfg: func(c *config.Config) { c.Workflow.MaxDuration = time.Hour },
			st: state.State{Cycles: 2, FirstBlockAt: now.Add(-20 * time.Minute)}, tr: epic([]string{"bd-e.1"}),
			block: true, outcome: state.OutcomeContinue, cycle: 3, max: 50, after: 3, dl: 40 * time.Minute},
		{name: "max_duration spent", event: EventRun, cfg: func(c *config.Config) { c.Workflow.MaxDuration = time.Hour },
			st: state.State{Cycles: 2, FirstBlockAt: now.Add(-time.Hour)}, tr: epic([]string{"bd-e.1"}),
			outcome: state.OutcomeCapReached, cycle: 2, max: 50, ended: state.OutcomeCapReached},
		{name: "a hook's checkpoint lets the session go", final: checkpoint, st: state.State{Cycles: 3}, tr: epic([]string{"bd-e.1"}),
			outcome: state.OutcomeCheckpoint, cycle: 3, max: 50, after: 3, ended: state.OutcomeCheckpoint},
		{name: "a run's checkpoint goes on fresh, and counts", event: EventRun, final: checkpoint, st: state.State{Cycles: 3},
			tr: epic([]string{"bd-e.1"}), block: true, outcome: state.OutcomeCheckpoint, fresh: true, cycle: 4, max: 50, after: 4,
			reason: prompt + "\n\nruntasks: cycle 4/50 · 1 ready"},
		{name: "a run's checkpoint meets the cap", event: EventRun, final: checkpoint, st: state.State{Cycles: 50},
			tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeCapReached, cycle: 50, max: 50, ended: state.OutcomeCapReached},
		{name: "complete: the count it ended at", event: EventRun, st: state.State{Cycles: 4}, tr: epic(nil),
			outcome: state.OutcomeComplete, cycle: 4, max: 50, ended: state.OutcomeComplete},
		{name: "escalation: the count it ended at", st: state.State{Cycles: 4}, tr: epic(nil, issue("bd-e.2", "blocked")),
			outcome: state.OutcomeEscalated, cycle: 4, max: 50},
		{name: "budget spent", event: EventRun, cfg: func(c *config.Config) { c.Workflow.Budget.SessionTokens = 100 },
			st: state.State{Cycles: 4, Spent: usage.Spent{Tokens: usage.Tokens{Output: 100}}}, tr: epic([]string{"bd-e.1"}),
			outcome: state.OutcomeBudget, cycle: 4, max: 50, ended: state.OutcomeBudget},
		{name: "no progress after the warning", event: EventRun,
			st: state.State{Cycles: 5, Unchanged: 3, NoProgressWarned: true,
				ReadyFingerprint: fingerprint(epic([]string{"bd-e.1"}).ready), Fingerprint: fingerprint(epic([]string{"bd-e.1"}).subtree)},
			tr: epic([]string{"bd-e.1"}), outcome: state.OutcomeNoProgress, cycle: 5, max: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			if tt.cfg != nil {
				tt.cfg(cfg)
			}
			event := tt.event
			if event == "" {
				event = "Stop"
			}
			st := tt.st
			st.Session, st.Epic = "s1", cfg.Workflow.Epic
			in := Input{SessionID: "s1", Event: event, FinalMessage: tt.final}
			dec, next := decideCfg(context.Background(), in, st, cfg, Env{Ports: Ports{Beads: tt.tr, Uncommitted: fakeWorkspace{}.Uncommitted}, Prompt: prompt, Now: now})
			if dec.Block != tt.block || dec.Outcome != tt.outcome || dec.Fresh != tt.fresh {
				t.Fatalf("block=%v outcome=%s fresh=%v (%s), want block=%v outcome=%s fresh=%v",
					dec.Block, dec.Outcome, dec.Fresh, dec.Why, tt.block, tt.outcome, tt.fresh)
			}
			if dec.Cycle != tt.cycle || dec.Max != tt.max || next.Cycles != tt.after || next.Ended != tt.ended {
				t.Errorf("decision %d/%d, state %d ended %q; want %d/%d, %d ended %q",
					dec.Cycle, dec.Max, next.Cycles, next.Ended, tt.cycle, tt.max, tt.after, tt.ended)
			}
			var dl time.Time
			if tt.dl > 0 {
				dl = now.Add(tt.dl)
			}
			if !dec.Deadline.Equal(dl) {
				t.Errorf("deadline %v, want %v", dec.Deadline, dl)
			}
			if !strings.Contains(dec.Reason, tt.reason) {
				t.Errorf("reason lacks %q:\n%s", tt.reason, dec.Reason)
			}
			rec := NewRecord(in, "bd-e", dec, now)
			if rec.Cycle != tt.cycle || rec.Max != tt.max {
				t.Errorf("record %d/%d, want the decision's %d/%d", rec.Cycle, rec.Max, tt.cycle, tt.max)
			}
		})
	}
}

// Stop builds the whole input of every entry point: it sums the other
// sessions' spending on the epic for its budget, and hands each recorded
// decision, once, to the notify port (never a dry run's).
func TestStopSpendingAndNotify(t *testing.T) {
	s := &state.Store{Dir: t.TempDir()}
	cfg := testConfig()
	cfg.Workflow.Budget.EpicTokens = 1000
	cfg.Usage.Prices = []usage.Price{{Model: "m-*", Input: 1, Output: 1}}
	var got []string
	p := stopPorts(epic([]string{"bd-e.1"}))
	p.Notify = func(in Input, dec Decision) { got = append(got, in.SessionID+" "+string(dec.Outcome)) }
	stop := func(session string, u usage.Usage, dry bool) Decision {
		t.Helper()
		dec, err := Stop(context.Background(), s, cfg, StopRequest{Input: Input{SessionID: session, Event: EventRun, Usage: u},
			EpicFromFlag: true, DryRun: dry}, p)
		if err != nil {
			t.Fatal(err)
		}
		return dec
	}
	if dec := stop("w1", usageOf("m-1", 600, 0, 0, 0), false); dec.Outcome != state.OutcomeContinue {
		t.Fatalf("w1: %s (%s)", dec.Outcome, dec.Why)
	}
	if dec := stop("w2", usage.Usage{}, true); dec.Outcome != state.OutcomeContinue {
		t.Fatalf("w2's dry run: %s (%s)", dec.Outcome, dec.Why)
	}
	// w2's 500 tokens and w1's 600 spend the epic's 1,000.
	dec := stop("w2", usageOf("m-1", 500, 0, 0, 0), false)
	if dec.Outcome != state.OutcomeBudget || !strings.Contains(dec.Why, "epic bd-e budget spent: 1.1k of 1k tokens") {
		t.Fatalf("w2: %s (%s); want the epic's budget spent with w1's tokens", dec.Outcome, dec.Why)
	}
	if want := "w1 continue,w2 budget"; strings.Join(got, ",") != want {
		t.Errorf("notified %q, want %q (each recorded decision once, no dry run)", strings.Join(got, ","), want)
	}
}

// A loop nobody watches needs a cap.
func TestCheckBound(t *testing.T) {
	for n, ok := range map[int]bool{-1: false, 0: false, 1: true, 50: true} {
		cfg := testConfig()
		cfg.Workflow.StopHook.MaxCycles = n
		if err := CheckBound(cfg); (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "--max-cycles N")) {
			t.Errorf("max_cycles %d: %v", n, err)
		}
	}
}
