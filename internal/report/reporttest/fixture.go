// Package reporttest holds the decision log of a small epic, for the
// tests of runtasks report (the golden page, the browser test and the
// README's screenshot are all made from it).
package reporttest

import (
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/report"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// T0 is when the fixture's first decision was made.
var T0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func counts(remaining int) *state.Counts {
	return &state.Counts{Ready: 1, Remaining: remaining}
}

func spent(in, out int64, cost float64) *usage.Spent {
	return &usage.Spent{Tokens: usage.Tokens{Input: in, Output: out, CacheRead: 10 * in}, Cost: cost, Models: []string{"claude-sonnet-4-5"}}
}

// Fixture is an epic of four tasks worked by two sessions: one closes two
// tasks, has a promise rejected and escalates; the other finds a stuck
// task and completes. A reason and a title carry markup, which must stay
// text.
func Fixture() report.Input {
	at := func(m int) time.Time { return T0.Add(time.Duration(m) * time.Minute) }
	return report.Input{
		Epic:  "bd-e1",
		Title: "Ship the parser",
		Now:   at(200),
		Loc:   time.UTC,
		Tasks: []beads.Issue{
			{ID: "bd-e1.1", Title: "Write the parser", Status: beads.StatusClosed, Assignee: "alice@s-alpha", ClosedAt: at(10)},
			{ID: "bd-e1.2", Title: "Test the parser", Status: beads.StatusClosed, ClosedAt: at(25)},
			{ID: "bd-e1.3", Title: "Document the parser", Status: beads.StatusClosed, Assignee: "bob@s-beta", ClosedAt: at(110)},
			{ID: "bd-e1.4", Title: "Release <b>it</b>", Status: beads.StatusClosed, ClosedAt: at(100)},
		},
		Records: []state.Record{
			{Time: at(0), Session: "s-alpha", Epic: "bd-e1", Agent: "claude", Outcome: state.OutcomeContinue, Block: true, Cycle: 1, Max: 50, Why: "4 ready", Counts: counts(4), Usage: spent(1000, 200, 0.05), Task: "bd-e1.1"},
			{Time: at(12), Session: "s-alpha", Epic: "bd-e1", Agent: "claude", Outcome: state.OutcomeContinue, Block: true, Cycle: 2, Max: 50, Why: "3 ready", Counts: counts(3), Usage: spent(3000, 900, 0.21), Task: "bd-e1.1"},
			{Time: at(30), Session: "s-alpha", Epic: "bd-e1", Agent: "claude", Outcome: state.OutcomeRejected, Block: true, Cycle: 3, Max: 50, Why: `promise rejected: 2 tasks open <script>alert("x")</script>`, Counts: counts(2), Usage: spent(2500, 700, 0.18), Task: "bd-e1.2"},
			{Time: at(31), Session: "s-other", Epic: "bd-other", Outcome: state.OutcomeContinue, Block: true, Cycle: 1, Why: "another epic", Counts: counts(9)},
			{Time: at(44), Session: "s-alpha", Epic: "bd-e1", Agent: "claude", Outcome: state.OutcomeEscalated, Cycle: 3, Max: 50, Why: "only blocked work remains: bd-e1.3 blocked", Counts: counts(2), Usage: spent(800, 100, 0.03), Task: "bd-e1.2"},
			{Time: at(45), Session: "s-alpha", Epic: "bd-e1", Outcome: state.OutcomeSubagent, Why: "a subagent stopped"},
			{Time: at(90), Session: "s-beta", Epic: "bd-e1", Agent: "codex", Outcome: state.OutcomeContinue, Block: true, Cycle: 1, Max: 50, Why: "1 ready", Counts: counts(2),
				Actions: []string{"bd-e1.3 stuck (in progress 3h, no update): status set to blocked, note appended"}, Usage: &usage.Spent{Tokens: usage.Tokens{Input: 5000, Output: 1200}, Unpriced: 6200, Models: []string{"gpt-5-codex"}}, Task: "bd-e1.4"},
			{Time: at(120), Session: "s-beta", Epic: "bd-e1", Agent: "codex", Outcome: state.OutcomeComplete, Cycle: 1, Max: 50, Why: "promise confirmed by beads", Counts: counts(0), Usage: spent(900, 300, 0.04), Task: "bd-e1.4"},
		},
		Runs: []headless.RunState{
			{RunID: "20260302-103000-ab12", Epic: "bd-e1", Agent: "codex", EngineSession: "s-beta", Status: "complete", Cycle: 2, MaxCycles: 50, StartedAt: at(89), EndedAt: at(121), Closed: 4, Total: 4, Why: "promise confirmed by beads",
				Cycles: []headless.CycleRecord{{N: 1}, {N: 2}}},
			{RunID: "20260302-090000-zz99", Epic: "bd-other", Status: "running"},
		},
	}
}
