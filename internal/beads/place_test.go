package beads

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeStore is a whole store as bd holds it: every issue's status and
// parent links, and the ready ones in bd's order. It answers placeReady's
// reads (bd list --id … --all, bd ready --parent E) and logs each one: a
// read is one bd process.
type fakeStore struct {
	issues  map[string]Issue
	ready   []string
	calls   []string
	listErr error
}

// store builds a fakeStore from lines "id status parent…" ("-" for no
// parent); an issue whose status ends in "*" is ready, in the order given.
func store(lines ...string) *fakeStore {
	s := &fakeStore{issues: map[string]Issue{}}
	for _, l := range lines {
		f := strings.Fields(l)
		st, ready := strings.CutSuffix(f[1], "*")
		is := Issue{ID: f[0], Status: st}
		for i, p := range f[2:] {
			switch {
			case p == "-":
			case i == 0:
				is.Parent = p
			default:
				is.Dependencies = append(is.Dependencies, Dependency{IssueID: f[0], DependsOnID: p, Type: DepParentChild})
			}
		}
		s.issues[is.ID] = is
		if ready {
			s.ready = append(s.ready, is.ID)
		}
	}
	return s
}

func (s *fakeStore) readyAll() []Issue {
	var out []Issue
	for _, id := range s.ready {
		out = append(out, s.issues[id])
	}
	return out
}

func (s *fakeStore) ListIDs(_ context.Context, ids []string) ([]Issue, error) {
	s.calls = append(s.calls, "list "+strings.Join(ids, ","))
	if s.listErr != nil {
		return nil, s.listErr
	}
	var out []Issue
	for _, id := range ids {
		if is, ok := s.issues[id]; ok {
			out = append(out, is)
		}
	}
	return out, nil
}

// ReadyParent is bd's rule read off the whole store: the ready issues
// reached from the epic through parent links of any status, or with no
// parent link and an id numbered under the epic's.
func (s *fakeStore) ReadyParent(_ context.Context, epic string) ([]Issue, error) {
	s.calls = append(s.calls, "parent "+epic)
	return s.oracle(epic), nil
}

func (s *fakeStore) oracle(epic string) []Issue {
	var all []Issue
	for _, is := range s.issues {
		all = append(all, is)
	}
	member := under(all, epic)
	var out []Issue
	for _, is := range s.readyAll() {
		if member[is.ID] {
			out = append(out, is)
		}
	}
	return out
}

// TestPlaceReady: for each shape of store, placeReady gives bd ready
// --parent's answer (the fake's, from the whole store) with the bd reads
// listed: none beyond the ready answer when every chain runs through ready
// issues or provably leaves the epic; one bd list of the issues that are
// not ready, up the chain; bd ready --parent only when bd does not know a
// link or the chain is too long.
func TestPlaceReady(t *testing.T) {
	const r, wip, closed, deferred = "open*", "in_progress", "closed", "deferred"
	tests := []struct {
		name  string
		store *fakeStore
		calls []string
		err   string
	}{
		{
			name:  "every chain through ready issues: no read",
			store: store("e open* -", "e.1 open* e", "e.2 open* e", "e.2.1 open* e.2", "x open* -", "x.1 open* x", "t open* -"),
		},
		{
			name: "issues closed, in progress or deferred elsewhere with nothing ready below: no read",
			store: store("e open* -", "e.1 open* e", "e.2 closed e", "e.3 in_progress e", "x in_progress -", "x.1 closed x",
				"y deferred -", "y.1 deferred y"),
		},
		{
			name:  "an epic in progress elsewhere with ready tasks: one read, out",
			store: store("e open* -", "e.1 open* e", "x in_progress -", "x.1 open* x", "x.2 open* x"),
			calls: []string{"list x"},
		},
		{
			name:  "an epic closed with --force elsewhere while its tasks are open: one read, out",
			store: store("e open* -", "e.1 open* e", "x closed -", "x.1 open* x"),
			calls: []string{"list x"},
		},
		{
			name:  "a deferred epic elsewhere: one read, out",
			store: store("e open* -", "e.1 open* e", "x deferred -", "x.1 open* x"),
			calls: []string{"list x"},
		},
		{
			name: "several such epics elsewhere: one read for all",
			store: store("e open* -", "e.1 open* e", "x in_progress -", "x.1 open* x", "y closed -", "y.1 open* y",
				"z deferred -", "z.1 open* z", "w in_progress -", "w.1 open* w"),
			calls: []string{"list w,x,y,z"},
		},
		{
			name: "the same shapes inside the epic: one read, in",
			store: store("e open* -", "e.1 in_progress e", "e.1.1 open* e.1", "e.2 closed e", "e.2.1 open* e.2",
				"e.3 deferred e", "e.3.1 open* e.3"),
			calls: []string{"list e.1,e.2,e.3"},
		},
		{
			name:  "under a sub-epic of an epic in progress elsewhere: the hierarchical ids above come in the same read",
			store: store("e open* -", "x in_progress -", "x.1 closed x", "x.1.1 open* x.1"),
			calls: []string{"list x.1,x"},
		},
		{
			name:  "nested not-ready sub-epics inside the epic, hierarchical ids: one read",
			store: store("e open* -", "e.1 closed e", "e.1.2 in_progress e.1", "e.1.2.3 open* e.1.2"),
			calls: []string{"list e.1.2,e.1"},
		},
		{
			name:  "nested not-ready sub-epics, ids that say nothing: one read a step",
			store: store("e open* -", "a closed e", "b in_progress a", "t open* b"),
			calls: []string{"list b", "list a"},
		},
		{
			name:  "a not-ready sub-epic moved out of the epic: its id lies, its link counts",
			store: store("e open* -", "x open* -", "e.1 in_progress x", "e.1.1 open* e.1"),
			calls: []string{"list e.1"},
		},
		{
			name:  "a not-ready epic moved into the epic from elsewhere",
			store: store("e open* -", "x.1 deferred e", "x.1.1 open* x.1"),
			calls: []string{"list x.1,x"},
		},
		{
			name:  "a second parent in the epic is enough: the other, not ready, is not read",
			store: store("e open* -", "x in_progress -", "t open* x e"),
		},
		{
			name:  "a second parent not ready: read",
			store: store("e open* -", "x open* -", "y closed e", "t open* x y"),
			calls: []string{"list y"},
		},
		{
			name:  "a hierarchical id without a parent link is the epic's (bd's rule); its not-ready sibling's chain is read",
			store: store("e open* -", "e.7 open* -", "e.8 in_progress -", "e.8.1 open* e.8"),
			calls: []string{"list e.8"},
		},
		{
			name:  "a parent bd does not know (deleted): the slow query",
			store: store("e open* -", "e.1 open* e", "t open* gone"),
			calls: []string{"list gone", "parent e"},
		},
		{
			name:  "a chain longer than the reads allow: the slow query",
			store: store("e open* -", "a closed e", "b closed a", "c in_progress b", "d deferred c", "t open* d"),
			calls: []string{"list d", "list c", "list b", "parent e"},
		},
		{
			name:  "a parent cycle away from the epic through issues not ready: read, out",
			store: store("e open* -", "a closed b", "b in_progress a", "t open* a"),
			calls: []string{"list a", "list b"},
		},
		{
			name:  "nothing ready",
			store: store("e closed -", "e.1 closed e"),
		},
		{
			name: "the read fails: an error, never no work",
			store: func() *fakeStore {
				s := store("e open* -", "x in_progress -", "x.1 open* x")
				s.listErr = errors.New("boom")
				return s
			}(),
			calls: []string{"list x"},
			err:   "boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.store
			got, err := placeReady(context.Background(), "e", s.readyAll(), s)
			if !slices.Equal(s.calls, tt.calls) {
				t.Errorf("bd reads after the ready answer: %q, want %q", s.calls, tt.calls)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || got != nil {
					t.Fatalf("placeReady = %v, %v; want no list and an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := s.oracle("e")
			if !slices.EqualFunc(got, want, func(a, b Issue) bool { return a.ID == b.ID }) {
				t.Errorf("placeReady = %v, bd ready --parent = %v", issueIDs(got), issueIDs(want))
			}
		})
	}
}

func issueIDs(issues []Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.ID)
	}
	return out
}
