package orchestrator

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

func usageOf(model string, in, out, cr, cw int64) Usage {
	return Usage{Models: []ModelUsage{{Model: model, Tokens: Tokens{Input: in, Output: out, CacheRead: cr, CacheWrite: cw}}}}
}

func TestSpend(t *testing.T) {
	cfg := &Config{Usage: UsageConfig{Prices: []Price{
		{Model: "claude-opus-4-5*", Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		{Model: "claude-opus-4*", Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	}}}
	tests := []struct {
		name     string
		u        Usage
		cost     float64
		unpriced int64
		models   []string
	}{
		// 1M of each kind at 4.5's prices: 5 + 25 + 0.5 + 6.25.
		{"first match wins", usageOf("claude-opus-4-5-20251101", 1e6, 1e6, 1e6, 1e6), 36.75, 0, []string{"claude-opus-4-5-20251101"}},
		{"the broader pattern", usageOf("claude-opus-4-1", 1000, 100, 0, 0), (1000*15 + 100*75) / 1e6, 0, []string{"claude-opus-4-1"}},
		{"unknown model: tokens only", usageOf("fake-model", 10, 5, 100, 0), 0, 115, []string{"fake-model"}},
		{"no model named", usageOf("", 10, 5, 0, 0), 0, 15, nil},
		{"two models", Usage{Models: []ModelUsage{
			{Model: "claude-opus-4-1", Tokens: Tokens{Output: 1e6}}, {Model: "gpt-x", Tokens: Tokens{Input: 7}}}},
			75, 7, []string{"claude-opus-4-1", "gpt-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cfg.Spend(tt.u)
			if math.Abs(s.Cost-tt.cost) > 1e-12 || s.Unpriced != tt.unpriced || strings.Join(s.Models, ",") != strings.Join(tt.models, ",") {
				t.Errorf("Spend = %+v, want cost %g, unpriced %d, models %v", s, tt.cost, tt.unpriced, tt.models)
			}
		})
	}
}

func TestFormatTokensAndCost(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1k", 12345: "12.3k", 4_560_000: "4.56M", 2_000_000: "2M"} {
		if got := FormatTokens(n); got != want {
			t.Errorf("FormatTokens(%d) = %q, want %q", n, got, want)
		}
	}
	for c, want := range map[float64]string{0: "$0.0000", 0.0123: "$0.0123", 1.234: "$1.23", 1234.4: "$1234"} {
		if got := FormatCost(c); got != want {
			t.Errorf("FormatCost(%g) = %q, want %q", c, got, want)
		}
	}
}

// Each stop's usage is recorded in its decision and summed in the
// session's state, which survives a loop that ends (an escalation) and
// is kept by the state of an ended loop.
func TestDecideRecordsUsage(t *testing.T) {
	cfg := testConfig()
	cfg.Usage.Prices = []Price{{Model: "m-*", Input: 1, Output: 2}}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	env := Env{Beads: epic([]string{"bd-e.1"}), Now: now}
	in := Input{SessionID: "s1", Event: "Stop", Usage: usageOf("m-1", 1e6, 1e6, 10, 0),
		Claims: []ClaimedRun{{Task: "bd-e.1", ClaimedAt: now.Add(-time.Hour)}, {Task: "bd-e.2", ClaimedAt: now.Add(-time.Minute)}}}
	dec, st := decideCfg(context.Background(), in, State{Session: "s1", Epic: "bd-e"}, cfg, env)
	if !dec.Block || st.Spent.Total() != 2e6+10 || st.Spent.Cost != 3 {
		t.Fatalf("decision %s block=%v, spent %+v; want a block and 2000010 tokens, $3", dec.Outcome, dec.Block, st.Spent)
	}
	if st.LastReason != dec.Reason || dec.Reason == "" {
		t.Errorf("the state keeps the last reason: %q", st.LastReason)
	}
	rec := NewRecord(in, "bd-e", dec, st, cfg, now)
	if rec.Usage == nil || rec.Usage.Tokens != (Tokens{Input: 1e6, Output: 1e6, CacheRead: 10}) || rec.Usage.Cost != 3 || rec.Task != "bd-e.2" {
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
	if rec := NewRecord(Input{SessionID: "s1"}, "bd-e", Decision{Outcome: OutcomeContinue}, st, cfg, now); rec.Usage != nil {
		t.Errorf("record without usage has %+v", rec.Usage)
	}
}

func TestDecideBudget(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		budget Budget
		spent  Spent // before this stop
		others map[string]Spent
		usage  Usage
		epic   string
		want   Outcome
		why    string
	}{
		{"no budget", Budget{}, Spent{Tokens: Tokens{Input: 1e9}}, nil, Usage{}, "bd-e", OutcomeContinue, ""},
		{"under the session tokens", Budget{SessionTokens: 1000}, Spent{Tokens: Tokens{Input: 500}}, nil,
			usageOf("m-1", 499, 0, 0, 0), "bd-e", OutcomeContinue, ""},
		{"this stop spends the session tokens", Budget{SessionTokens: 1000}, Spent{Tokens: Tokens{Input: 500}}, nil,
			usageOf("m-1", 400, 100, 0, 0), "bd-e", OutcomeBudget, "session budget spent: 1k of 1k tokens"},
		{"session cost", Budget{SessionCost: 2}, Spent{Cost: 1.5}, nil,
			usageOf("m-1", 500_000, 0, 0, 0), "bd-e", OutcomeBudget, "session budget spent: $2.00 of $2.00"},
		{"unpriced tokens cost nothing", Budget{SessionCost: 2}, Spent{Cost: 1.5}, nil,
			usageOf("other", 5e6, 0, 0, 0), "bd-e", OutcomeContinue, ""},
		{"epic tokens with the other sessions", Budget{EpicTokens: 10_000}, Spent{Tokens: Tokens{Output: 1000}},
			map[string]Spent{"bd-e": {Tokens: Tokens{Output: 9000}}, "bd-other": {Tokens: Tokens{Output: 1e9}}},
			Usage{}, "bd-e", OutcomeBudget, "epic bd-e budget spent: 10k of 10k tokens"},
		{"another epic's spending does not count", Budget{EpicTokens: 10_000}, Spent{Tokens: Tokens{Output: 1000}},
			map[string]Spent{"bd-other": {Tokens: Tokens{Output: 1e9}}}, Usage{}, "bd-e", OutcomeContinue, ""},
		{"epic cost", Budget{EpicCost: 10}, Spent{Cost: 4}, map[string]Spent{"bd-e": {Cost: 6}},
			Usage{}, "bd-e", OutcomeBudget, "epic bd-e budget spent: $10.00 of $10.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Workflow.Budget = tt.budget
			cfg.Usage.Prices = []Price{{Model: "m-*", Input: 1, Output: 1}}
			// A command check that must not run once the budget is spent.
			cfg.Workflow.Checks = []CheckSpec{{Type: "beads"}}
			tr := epic([]string{"bd-e.1"})
			in := Input{SessionID: "s1", Event: "Stop", Epic: tt.epic, Usage: tt.usage, OthersSpent: tt.others}
			dec, st := Decide(context.Background(), in, State{Session: "s1", Epic: "bd-e", Spent: tt.spent, Cycles: 3, FirstBlockAt: now.Add(-time.Hour)}, cfg, Env{Beads: tr, Now: now})
			if dec.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", dec.Outcome, dec.Why, tt.want)
			}
			if tt.want != OutcomeBudget {
				return
			}
			if dec.Block || !strings.Contains(dec.Why, tt.why) || !strings.Contains(dec.SystemMessage, tt.why) ||
				!strings.Contains(dec.SystemMessage, "workflow.budget") {
				t.Errorf("decision block=%v why %q message %q; want an allowed stop naming %q", dec.Block, dec.Why, dec.SystemMessage, tt.why)
			}
			if len(tr.calls) > 0 {
				t.Errorf("checks ran after the budget was spent: %v", tr.calls)
			}
			if st.Ended != OutcomeBudget || st.Cycles != 0 {
				t.Errorf("state ended %q cycles %d; want the loop ended for good by the budget", st.Ended, st.Cycles)
			}
			if c := dec.Outcome.Class(); c != ClassNeedsPerson || !dec.Outcome.Final() {
				t.Errorf("budget: class %v final %v", c, dec.Outcome.Final())
			}
		})
	}
}

func TestSpentByEpic(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	for _, st := range []State{
		{Session: "a", Epic: "bd-e", Spent: Spent{Tokens: Tokens{Input: 1}, Cost: 1}},
		{Session: "b", Epic: "bd-e", Spent: Spent{Tokens: Tokens{Input: 2}, Cost: 2}},
		{Session: "c", Epic: "bd-f", Spent: Spent{Tokens: Tokens{Input: 4}}},
	} {
		if _, err := s.Update(st.Session, st.Epic, func(p *State) error { p.Spent = st.Spent; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.SpentByEpic("a")
	if err != nil {
		t.Fatal(err)
	}
	if got["bd-e"].Input != 2 || got["bd-e"].Cost != 2 || got["bd-f"].Input != 4 {
		t.Errorf("SpentByEpic = %+v", got)
	}
}

func TestUsageSince(t *testing.T) {
	e := func(id string, in int64, earlier bool) UsageEntry {
		return UsageEntry{ID: id, Model: "m", Tokens: Tokens{Input: in}, Earlier: earlier}
	}
	// Newest first: m5, m4 since the previous stop; m3 (written late,
	// after the previous stop's hook) and m2 before it.
	u := Usage{Entries: []UsageEntry{e("m5", 5, false), e("m4", 4, false), e("m3", 3, true), e("m2", 2, true)}}
	tests := []struct {
		cursor string
		want   int64
	}{
		{"m2", 12},        // the late m3 is counted now
		{"m3", 9},         // m3 was counted at the previous stop
		{"", 9},           // no cursor: since the previous stop
		{"gone", 9},       // a cursor not found: the same
		{"m5", 0},         // nothing new
		{StartCursor, 14}, // the previous stop counted nothing: all of it
	}
	for _, tt := range tests {
		got, next := u.Since(tt.cursor)
		var in int64
		for _, m := range got.Models {
			in += m.Input
		}
		if in != tt.want || next != "m5" {
			t.Errorf("Since(%q) = %d tokens, cursor %q; want %d, m5", tt.cursor, in, next, tt.want)
		}
	}
	// A transcript with nothing written yet: nothing counted, and the
	// next stop counts all it reads.
	if got, next := (Usage{Transcript: true}).Since(""); len(got.Models) != 0 || next != StartCursor {
		t.Errorf("empty transcript: %+v, %q", got, next)
	}
	if _, next := (Usage{Transcript: true}).Since("m3"); next != "" {
		t.Errorf("empty read keeps the cursor: %q", next)
	}
	// A run's result event has no entries: its models as they are.
	r := Usage{Models: []ModelUsage{{Model: "x", Tokens: Tokens{Output: 7}}}}
	if got, next := r.Since("m1"); len(got.Models) != 1 || got.Models[0].Output != 7 || next != "" {
		t.Errorf("Since without entries = %+v, %q", got, next)
	}
}

// A notify command may run runtasks: the variables it gets are not read
// as configuration (an unknown RUNTASKS_ variable is a warning).
func TestNotifyVariablesAreNotConfiguration(t *testing.T) {
	dir := cfgProject(t, "")
	env := []string{"RUNTASKS_EPIC=bd-e"}
	for _, name := range NotifyEnvNames {
		env = append(env, name+"=x")
	}
	var warned []string
	warn := func(m string) { warned = append(warned, m) }
	cfg, _, err := Load(LoadOptions{StartDir: dir, Environ: env, Warn: warn})
	if err != nil {
		t.Fatalf("Load with the notify variables: %v", err)
	}
	if cfg.Workflow.Epic != "bd-e" {
		t.Errorf("RUNTASKS_EPIC is still the epic: %q", cfg.Workflow.Epic)
	}
	if len(warned) != 0 {
		t.Errorf("the notify variables were warned about: %q", warned)
	}
	// Any other unknown RUNTASKS_ variable is still noticed (a warning).
	if _, _, err := Load(LoadOptions{StartDir: dir, Environ: []string{"RUNTASKS_EVENTS=x"}, Warn: warn}); err != nil || len(warned) != 1 {
		t.Errorf("an unknown RUNTASKS_ variable: err %v, warnings %q", err, warned)
	}
}

func TestNotifyConfigErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"workflow:\n  notify:\n    - {run: x, events: [done]}\n", `workflow.notify[0].events[0]: unknown event "done"`},
		{"workflow:\n  notify:\n    - {events: [complete]}\n", "workflow.notify[0].run: missing"},
		{"workflow:\n  notify:\n    - {run: x, events: [complete], command: y}\n", "workflow.notify[0].command: unknown key"},
		{"workflow:\n  notify:\n    - {run: x, events: [complete], timeout: 2h}\n", "workflow.notify[0].timeout: must be 0s to 1h"},
		{"usage:\n  prices:\n    - {model: \"[\", input: 1}\n", "usage.prices[0].model: invalid pattern"},
		{"usage:\n  prices:\n    - {model: m, input: -1}\n", "usage.prices[0].input: must be 0 to 1e+06"},
		{"usage:\n  prices:\n    - {model: m, inputs: 1}\n", "usage.prices[0].inputs: unknown key"},
		{"workflow:\n  budget:\n    session_cost: -1\n", "workflow.budget.session_cost: must be 0 or more"},
	} {
		dir := cfgProject(t, tc.yaml)
		_, _, err := Load(LoadOptions{StartDir: dir})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
