// Package watch is runtasks status --watch: a full-screen live view
// (bubbletea) of every loop in a project, from the state directory, with
// the epics' progress from bd (Progress).
package watch

import (
	"cmp"
	"slices"
	"time"

	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// Row is one (session, epic) loop.
type Row struct {
	Session, Epic     string
	Cycles, Max       int
	Started, LastStop time.Time // the first block, the last decision
	Outcome           state.Outcome
	Block             bool
	Why               string
	Reason            string // the full reason last fed back
	Given             bool   // Reason is the prompt runtasks run gave the agent (GivenPrompts)
	Counts            *state.Counts
	// Seen is the most unclosed work a decision on the epic saw, Closed
	// how much of it is gone now.
	Closed, Seen int
	Spent        usage.Spent
	Claims       []string
	// NeedsPerson: the loop stopped for a person or runtasks failed.
	NeedsPerson bool
}

// Snapshot is the state directory at one moment.
type Snapshot struct {
	Rows []Row
	Runs []headless.RunState // LiveRuns
	Read time.Time
}

// NeedsPerson counts the rows that need a person.
func (s Snapshot) NeedsPerson() int {
	n := 0
	for _, r := range s.Rows {
		if r.NeedsPerson {
			n++
		}
	}
	return n
}

// historyWindow is how many decisions per epic are read back for the bar.
const historyWindow = 2000

// Load reads every session's state, its claims and its epic's progress.
func Load(store *state.Store, now time.Time) (Snapshot, error) {
	states, err := store.List()
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Read: now}
	seen := map[string]int{}
	for _, st := range states {
		r := Row{Session: st.Session, Epic: st.Epic, Started: st.FirstBlockAt, Reason: st.LastReason, Spent: st.Spent}
		r.Cycles, r.Max = st.Count()
		outcome := st.Ended
		if l := st.Last; l != nil {
			r.LastStop, r.Outcome, r.Block, r.Why, r.Counts = l.Time, l.Outcome, l.Block, l.Why, l.Counts
			outcome = l.Outcome
		}
		if outcome == state.OutcomeEnded {
			outcome = st.Ended
		}
		r.NeedsPerson = needsPerson(outcome) && !r.Block
		if b, err := store.Binding(st.Session); err == nil {
			for _, c := range b.Claims {
				r.Claims = append(r.Claims, c.Task)
			}
		}
		if st.Epic != state.NoEpic {
			if _, ok := seen[st.Epic]; !ok {
				seen[st.Epic] = mostRemaining(store, st.Epic)
			}
			r.Seen = seen[st.Epic]
			if r.Counts != nil && r.Counts.Remaining >= 0 && r.Seen > 0 {
				r.Closed = max(r.Seen-r.Counts.Remaining, 0)
			}
		}
		snap.Rows = append(snap.Rows, r)
	}
	slices.SortStableFunc(snap.Rows, func(a, b Row) int {
		if a.NeedsPerson != b.NeedsPerson {
			if a.NeedsPerson {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.LastStop.UnixNano(), a.LastStop.UnixNano())
	})
	return snap, nil
}

func needsPerson(o state.Outcome) bool {
	c := o.Class()
	return o == state.OutcomeCapReached || o == state.OutcomeBudget || o != "" && (c == state.ClassNeedsPerson || c == state.ClassError)
}

// mostRemaining is the most unclosed work a recent decision on the epic
// counted (0: none).
func mostRemaining(store *state.Store, epic string) int {
	recs, err := store.Records(state.RecordFilter{Epic: epic, Limit: historyWindow})
	if err != nil {
		return 0
	}
	most := 0
	for _, r := range recs {
		if r.Counts != nil {
			most = max(most, r.Counts.Remaining)
		}
	}
	return most
}
