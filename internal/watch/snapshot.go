// Package watch is runtasks status --watch: a full-screen live view
// (bubbletea) of every loop in a project, from the state directory, with
// the epics' progress from bd (Progress).
package watch

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
)

// Row is one (session, epic) loop: its state and what the view adds.
type Row struct {
	state.State
	Given bool // LastReason is the prompt runtasks run gave the agent (see Load)
	// Seen is the most unclosed work a decision on the epic saw, Closed
	// how much of it is gone now.
	Closed, Seen int
	Claims       []string
	// NeedsPerson: the loop stopped for a person or runtasks failed.
	NeedsPerson bool
}

// last is the loop's last decision (zero before the first).
func (r Row) last() *state.Record { return cmp.Or(r.Last, &state.Record{}) }

// Snapshot is the state directory at one moment.
type Snapshot struct {
	Rows        []Row
	Runs        []headless.RunState
	NeedsPerson int // the rows that need a person
}

// historyWindow is how many decisions per epic are read back for the bar.
const historyWindow = 2000

// Load reads every session's state, its claims and its epic's progress,
// and runtasks run's records under runsDir ("" = none): the running and
// dead (process gone) runs, newest first, and for each runtasks run
// session (run-ID) the prompt its agent was last given
// (headless.PromptFile) as its reason: a worker's is its task, never the
// engine's reason.
func Load(store *state.Store, runsDir string) (Snapshot, error) {
	states, err := store.List()
	if err != nil {
		return Snapshot{}, err
	}
	var snap Snapshot
	seen := map[string]int{}
	for _, st := range states {
		r := Row{State: st}
		if id, ok := strings.CutPrefix(st.Session, "run-"); ok && runsDir != "" {
			if b, err := agentfile.Read(filepath.Join(runsDir, id, headless.PromptFile), agentfile.MaxText); err == nil {
				r.LastReason, r.Given = string(b), true
			}
		}
		outcome := st.Ended
		if l := st.Last; l != nil && l.Outcome != state.OutcomeEnded {
			outcome = l.Outcome
		}
		r.NeedsPerson = needsPerson(outcome) && !r.last().Block
		if r.NeedsPerson {
			snap.NeedsPerson++
		}
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
			if c := r.last().Counts; c != nil && c.Remaining >= 0 && r.Seen > 0 {
				r.Closed = max(r.Seen-c.Remaining, 0)
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
		return cmp.Compare(b.last().Time.UnixNano(), a.last().Time.UnixNano())
	})
	if runsDir != "" {
		snap.Runs, _, err = headless.ListRuns(runsDir)
		snap.Runs = slices.DeleteFunc(snap.Runs, func(r headless.RunState) bool { return r.Status != "running" && r.Status != headless.StatusDead })
	}
	return snap, err
}

func needsPerson(o state.Outcome) bool {
	c := o.Class()
	return o == state.OutcomeCapReached || o != "" && (c == state.ClassNeedsPerson || c == state.ClassError)
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
