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

func usageOf(model string, in, out, cr, cw int64) usage.Usage {
	return usage.Usage{Models: []usage.ModelUsage{{Model: model, Tokens: usage.Tokens{Input: in, Output: out, CacheRead: cr, CacheWrite: cw}}}}
}

// Each stop's usage is recorded in its decision and summed in the
// session's state, which survives a loop that ends (an escalation) and
// is kept by the state of an ended loop.
func TestDecideRecordsUsage(t *testing.T) {
	cfg := testConfig()
	cfg.Usage.Prices = []usage.Price{{Model: "m-*", Input: 1, Output: 2}}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	env := Env{Ports: Ports{Beads: epic([]string{"bd-e.1"})}, Now: now}
	in := Input{SessionID: "s1", Event: "Stop", Usage: usageOf("m-1", 1e6, 1e6, 10, 0),
		Claims: []state.ClaimedRun{{Task: "bd-e.1", ClaimedAt: now.Add(-time.Hour)}, {Task: "bd-e.2", ClaimedAt: now.Add(-time.Minute)}}}
	dec, st := decideCfg(context.Background(), in, state.State{Session: "s1", Epic: "bd-e"}, cfg, env)
	if !dec.Block || st.Spent.Total() != 2e6+10 || st.Spent.Cost != 3 {
		t.Fatalf("decision %s block=%v, spent %+v; want a block and 2000010 tokens, $3", dec.Outcome, dec.Block, st.Spent)
	}
	if st.LastReason != dec.Reason || dec.Reason == "" {
		t.Errorf("the state keeps the last reason: %q", st.LastReason)
	}
	rec := NewRecord(in, "bd-e", dec, now)
	if rec.Usage == nil || rec.Usage.Tokens != (usage.Tokens{Input: 1e6, Output: 1e6, CacheRead: 10}) || rec.Usage.Cost != 3 || rec.Task != "bd-e.2" {
		t.Errorf("record usage %+v, task %q; want this stop's tokens and $3 against bd-e.2", rec.Usage, rec.Task)
	}
	// Only blocked work left: an escalation ends the loop's counters, not
	// what it spent.
	env.Beads = epic(nil, issue("bd-e.3", "blocked"))
	_, st = decideCfg(context.Background(), Input{SessionID: "s1", Event: "Stop", Usage: usageOf("m-1", 1, 0, 0, 0)}, st, cfg, env)
	if st.Cycles != 0 || st.Spent.Total() != 2e6+11 {
		t.Errorf("after an escalation: cycles %d, spent %d; want 0 and 2000011", st.Cycles, st.Spent.Total())
	}
	// A stop without usage records none.
	if rec := NewRecord(Input{SessionID: "s1"}, "bd-e", Decision{Outcome: state.OutcomeContinue}, now); rec.Usage != nil {
		t.Errorf("record without usage has %+v", rec.Usage)
	}
}

func TestDecideBudget(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		budget config.Budget
		spent  usage.Spent // before this stop
		others map[string]usage.Spent
		usage  usage.Usage
		epic   string
		want   state.Outcome
		why    string
	}{
		{"no budget", config.Budget{}, usage.Spent{Tokens: usage.Tokens{Input: 1e9}}, nil, usage.Usage{}, "bd-e", state.OutcomeContinue, ""},
		{"under the session tokens", config.Budget{SessionTokens: 1000}, usage.Spent{Tokens: usage.Tokens{Input: 500}}, nil,
			usageOf("m-1", 499, 0, 0, 0), "bd-e", state.OutcomeContinue, ""},
		{"this stop spends the session tokens", config.Budget{SessionTokens: 1000}, usage.Spent{Tokens: usage.Tokens{Input: 500}}, nil,
			usageOf("m-1", 400, 100, 0, 0), "bd-e", state.OutcomeBudget, "session budget spent: 1k of 1k tokens"},
		{"session cost", config.Budget{SessionCost: 2}, usage.Spent{Cost: 1.5}, nil,
			usageOf("m-1", 500_000, 0, 0, 0), "bd-e", state.OutcomeBudget, "session budget spent: $2.00 of $2.00"},
		{"unpriced tokens cost nothing", config.Budget{SessionCost: 2}, usage.Spent{Cost: 1.5}, nil,
			usageOf("other", 5e6, 0, 0, 0), "bd-e", state.OutcomeContinue, ""},
		{"epic tokens with the other sessions", config.Budget{EpicTokens: 10_000}, usage.Spent{Tokens: usage.Tokens{Output: 1000}},
			map[string]usage.Spent{"bd-e": {Tokens: usage.Tokens{Output: 9000}}, "bd-other": {Tokens: usage.Tokens{Output: 1e9}}},
			usage.Usage{}, "bd-e", state.OutcomeBudget, "epic bd-e budget spent: 10k of 10k tokens"},
		{"another epic's spending does not count", config.Budget{EpicTokens: 10_000}, usage.Spent{Tokens: usage.Tokens{Output: 1000}},
			map[string]usage.Spent{"bd-other": {Tokens: usage.Tokens{Output: 1e9}}}, usage.Usage{}, "bd-e", state.OutcomeContinue, ""},
		{"epic cost", config.Budget{EpicCost: 10}, usage.Spent{Cost: 4}, map[string]usage.Spent{"bd-e": {Cost: 6}},
			usage.Usage{}, "bd-e", state.OutcomeBudget, "epic bd-e budget spent: $10.00 of $10.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Workflow.Budget = tt.budget
			cfg.Usage.Prices = []usage.Price{{Model: "m-*", Input: 1, Output: 1}}
			// A command check that must not run once the budget is spent.
			cfg.Workflow.Checks = []config.CheckSpec{{Type: "beads"}}
			tr := epic([]string{"bd-e.1"})
			in := Input{SessionID: "s1", Event: "Stop", Epic: tt.epic, Usage: tt.usage, OthersSpent: tt.others}
			dec, st := Decide(context.Background(), in, state.State{Session: "s1", Epic: "bd-e", Spent: tt.spent, Cycles: 3, FirstBlockAt: now.Add(-time.Hour)}, cfg, Env{Ports: Ports{Beads: tr}, Now: now})
			if dec.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", dec.Outcome, dec.Why, tt.want)
			}
			if tt.want != state.OutcomeBudget {
				return
			}
			if dec.Block || !strings.Contains(dec.Why, tt.why) || !strings.Contains(dec.SystemMessage, tt.why) ||
				!strings.Contains(dec.SystemMessage, "workflow.budget") {
				t.Errorf("decision block=%v why %q message %q; want an allowed stop naming %q", dec.Block, dec.Why, dec.SystemMessage, tt.why)
			}
			if len(tr.calls) > 0 {
				t.Errorf("checks ran after the budget was spent: %v", tr.calls)
			}
			if st.Ended != state.OutcomeBudget || st.Cycles != 0 {
				t.Errorf("state ended %q cycles %d; want the loop ended for good by the budget", st.Ended, st.Cycles)
			}
			if c := dec.Outcome.Class(); c != state.ClassNeedsPerson || !dec.Outcome.Final() {
				t.Errorf("budget: class %v final %v", c, dec.Outcome.Final())
			}
		})
	}
}

// A cost budget with tokens of a model without a price says so, once per
// loop; a token budget does not need prices.
func TestDecideBudgetUnpriced(t *testing.T) {
	ctx, now := context.Background(), time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cfg := testConfig()
	cfg.Workflow.Budget = config.Budget{SessionCost: 2}
	env := Env{Ports: Ports{Beads: epic([]string{"bd-e.1"})}, Now: now}
	in := Input{SessionID: "s1", Event: "Stop", Epic: "bd-e", Usage: usageOf("fake-model", 5e6, 0, 0, 0)}
	want := "the cost budget (workflow.budget) cannot be enforced: no price for fake-model"
	dec, st := Decide(ctx, in, state.State{Session: "s1", Epic: "bd-e"}, cfg, env)
	if !dec.Block || !strings.Contains(dec.SystemMessage, want) || !strings.Contains(dec.Why, want) {
		t.Fatalf("block=%v why %q message %q; want a block saying %q", dec.Block, dec.Why, dec.SystemMessage, want)
	}
	if dec, _ = Decide(ctx, in, st, cfg, env); strings.Contains(dec.SystemMessage, "cannot be enforced") {
		t.Errorf("said again at the next stop: %q", dec.SystemMessage)
	}
	cfg.Workflow.Budget = config.Budget{SessionTokens: 1e9}
	if dec, _ = Decide(ctx, in, state.State{Session: "s1", Epic: "bd-e"}, cfg, env); strings.Contains(dec.SystemMessage, "cannot be enforced") {
		t.Errorf("a token budget: %q", dec.SystemMessage)
	}
}
