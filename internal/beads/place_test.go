package beads

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStore is a whole store as bd holds it: every issue's status and
// parent links, and the ready ones in bd's order. It answers Ready's reads
// (bd ready --limit 0, bd list --id … --all, bd ready --parent E) and logs
// each one: a read is one bd process. Reads may come from two goroutines.
type fakeStore struct {
	issues   map[string]Issue
	ready    []string
	listErr  error
	readyErr error
	// readyHang makes bd ready wait until it is stopped (ctx cancelled).
	readyHang bool

	mu    sync.Mutex
	calls []string
	// meet, when set, makes the first two reads wait for each other (5 s
	// at most): they ran at the same time unless apart is set.
	meet  chan struct{}
	left  int
	apart bool
}

func (s *fakeStore) log(call string) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
}

// rendezvous is where the first two reads wait for each other.
func (s *fakeStore) rendezvous() {
	s.mu.Lock()
	if s.meet == nil || s.left == 0 {
		s.mu.Unlock()
		return
	}
	s.left--
	if s.left == 0 {
		close(s.meet)
	}
	meet := s.meet
	s.mu.Unlock()
	select {
	case <-meet:
	case <-time.After(5 * time.Second):
		s.mu.Lock()
		s.apart = true
		s.mu.Unlock()
	}
}

func (s *fakeStore) ReadyAll(ctx context.Context) ([]Issue, error) {
	s.log("ready")
	s.rendezvous()
	if s.readyHang {
		<-ctx.Done()
		return nil, errors.New("interrupted; bd was stopped")
	}
	if s.readyErr != nil {
		return nil, s.readyErr
	}
	return s.readyAll(), nil
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
	s.log("list " + strings.Join(ids, ","))
	s.rendezvous()
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
	s.log("parent " + epic)
	return s.oracle(epic), nil
}

func (s *fakeStore) oracle(epic string) []Issue {
	linked := map[string]bool{epic: true} // reached from the epic by links
	for changed := true; changed; {
		changed = false
		for _, is := range s.issues {
			if !linked[is.ID] && slices.ContainsFunc(is.parentIDs(), func(p string) bool { return linked[p] }) {
				linked[is.ID], changed = true, true
			}
		}
	}
	var out []Issue
	for _, is := range s.readyAll() {
		if is.ID != epic && (linked[is.ID] || len(is.parentIDs()) == 0 && strings.HasPrefix(is.ID, epic+".")) {
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
// link or the chain is too long. The next stop reads the issues this one
// read (remembered) while bd ready runs: again lists its reads, the first
// two at the same time.
func TestPlaceReady(t *testing.T) {
	tests := []struct {
		name  string
		store *fakeStore
		calls []string
		again []string
		err   string
	}{
		{
			name:  "every chain through ready issues: no read",
			store: store("e open* -", "e.1 open* e", "e.2 open* e", "e.2.1 open* e.2", "x open* -", "x.1 open* x", "t open* -"),
			again: []string{"ready"},
		},
		{
			name: "issues closed, in progress or deferred elsewhere with nothing ready below: no read",
			store: store("e open* -", "e.1 open* e", "e.2 closed e", "e.3 in_progress e", "x in_progress -", "x.1 closed x",
				"y deferred -", "y.1 deferred y"),
			again: []string{"ready"},
		},
		{
			name:  "an epic in progress elsewhere with ready tasks: one read, out",
			store: store("e open* -", "e.1 open* e", "x in_progress -", "x.1 open* x", "x.2 open* x"),
			calls: []string{"list x"},
			again: []string{"ready", "list x"},
		},
		{
			name:  "an epic closed with --force elsewhere while its tasks are open: one read, out",
			store: store("e open* -", "e.1 open* e", "x closed -", "x.1 open* x"),
			calls: []string{"list x"},
			again: []string{"ready", "list x"},
		},
		{
			name:  "a deferred epic elsewhere: one read, out",
			store: store("e open* -", "e.1 open* e", "x deferred -", "x.1 open* x"),
			calls: []string{"list x"},
			again: []string{"ready", "list x"},
		},
		{
			name: "several such epics elsewhere: one read for all",
			store: store("e open* -", "e.1 open* e", "x in_progress -", "x.1 open* x", "y closed -", "y.1 open* y",
				"z deferred -", "z.1 open* z", "w in_progress -", "w.1 open* w"),
			calls: []string{"list w,x,y,z"},
			again: []string{"ready", "list w,x,y,z"},
		},
		{
			name: "the same shapes inside the epic: one read, in",
			store: store("e open* -", "e.1 in_progress e", "e.1.1 open* e.1", "e.2 closed e", "e.2.1 open* e.2",
				"e.3 deferred e", "e.3.1 open* e.3"),
			calls: []string{"list e.1,e.2,e.3"},
			again: []string{"ready", "list e.1,e.2,e.3"},
		},
		{
			name:  "under a sub-epic of an epic in progress elsewhere: the hierarchical ids above come in the same read",
			store: store("e open* -", "x in_progress -", "x.1 closed x", "x.1.1 open* x.1"),
			calls: []string{"list x.1,x"},
			again: []string{"ready", "list x,x.1"},
		},
		{
			name:  "nested not-ready sub-epics inside the epic, hierarchical ids: one read",
			store: store("e open* -", "e.1 closed e", "e.1.2 in_progress e.1", "e.1.2.3 open* e.1.2"),
			calls: []string{"list e.1.2,e.1"},
			again: []string{"ready", "list e.1,e.1.2"},
		},
		{
			name:  "nested not-ready sub-epics, ids that say nothing: one read a step, all at once the next time",
			store: store("e open* -", "a closed e", "b in_progress a", "t open* b"),
			calls: []string{"list b", "list a"},
			again: []string{"ready", "list a,b"},
		},
		{
			name:  "a not-ready sub-epic moved out of the epic: its id lies, its link counts",
			store: store("e open* -", "x open* -", "e.1 in_progress x", "e.1.1 open* e.1"),
			calls: []string{"list e.1"},
			again: []string{"ready", "list e.1"},
		},
		{
			name:  "a not-ready epic moved into the epic from elsewhere",
			store: store("e open* -", "x.1 deferred e", "x.1.1 open* x.1"),
			calls: []string{"list x.1,x"},
			again: []string{"ready", "list x,x.1"},
		},
		{
			name:  "a second parent in the epic is enough: the other, not ready, is not read",
			store: store("e open* -", "x in_progress -", "t open* x e"),
			again: []string{"ready"},
		},
		{
			name:  "a second parent not ready: read",
			store: store("e open* -", "x open* -", "y closed e", "t open* x y"),
			calls: []string{"list y"},
			again: []string{"ready", "list y"},
		},
		{
			name:  "a hierarchical id without a parent link is the epic's (bd's rule); its not-ready sibling's chain is read",
			store: store("e open* -", "e.7 open* -", "e.8 in_progress -", "e.8.1 open* e.8"),
			calls: []string{"list e.8"},
			again: []string{"ready", "list e.8"},
		},
		{
			name:  "a parent bd does not know (deleted): the slow query",
			store: store("e open* -", "e.1 open* e", "t open* gone"),
			calls: []string{"list gone", "parent e"},
			again: []string{"ready", "list gone", "parent e"},
		},
		{
			name:  "a chain longer than the reads allow: the slow query, then the whole chain read ahead",
			store: store("e open* -", "a closed e", "b closed a", "c in_progress b", "d deferred c", "t open* d"),
			calls: []string{"list d", "list c", "list b", "parent e"},
			again: []string{"ready", "list a,b,c,d"},
		},
		{
			name:  "a parent cycle away from the epic through issues not ready: read, out",
			store: store("e open* -", "a closed b", "b in_progress a", "t open* a"),
			calls: []string{"list a", "list b"},
			again: []string{"ready", "list a,b"},
		},
		{
			name:  "nothing ready",
			store: store("e closed -", "e.1 closed e"),
			again: []string{"ready"},
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
			got, read, err := placeReady(context.Background(), "e", s.readyAll(), nil, false, nil, s)
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
			// The next stop, with what this one read remembered and read
			// beside bd ready (server mode).
			s.calls = nil
			if len(read) > 0 {
				s.meet, s.left = make(chan struct{}), 2
			}
			got, again, err := readyUnder(context.Background(), "e", read, len(read) > 0, s)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCalls(s.calls, tt.again) || s.apart {
				t.Errorf("the next stop's bd reads: %q (apart: %v), want %q, the first two at once", s.calls, s.apart, tt.again)
			}
			if !slices.EqualFunc(got, want, func(a, b Issue) bool { return a.ID == b.ID }) {
				t.Errorf("the next stop = %v, bd ready --parent = %v", issueIDs(got), issueIDs(want))
			}
			if !slices.Equal(again, read) {
				t.Errorf("the next stop remembers %q, the first %q", again, read)
			}
			// The same, the remembered issues read with the first read by
			// id (embedded mode): one read by id at most.
			s.calls, s.meet = nil, nil
			got, again, err = readyUnder(context.Background(), "e", read, false, s)
			if err != nil {
				t.Fatal(err)
			}
			lists := 0
			for _, c := range s.calls {
				if strings.HasPrefix(c, "list ") {
					lists++
				}
			}
			if s.calls[0] != "ready" || lists != min(len(read), 1) {
				t.Errorf("the next stop's bd reads, one after the other: %q", s.calls)
			}
			if !slices.EqualFunc(got, want, func(a, b Issue) bool { return a.ID == b.ID }) || !slices.Equal(again, read) {
				t.Errorf("the next stop, one after the other = %v remembering %q; bd ready --parent = %v", issueIDs(got), again, issueIDs(want))
			}
		})
	}
}

// sameCalls compares bd reads whose first two ran at the same time (in
// either order); the rest ran one after the other.
func sameCalls(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	if len(got) >= 2 {
		a, b := slices.Clone(got[:2]), slices.Clone(want[:2])
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b) && slices.Equal(got[2:], want[2:])
	}
	return slices.Equal(got, want)
}

// TestReadyAhead: a stop reads the issues the last one needed (hint) while
// bd ready runs. Nothing remembered: one bd process. Remembered and still
// all that is needed: two at once, no third, the exact answer. Something
// new to read: read after, as without a memory. Remembered but no longer
// needed: read for nothing once, then forgotten. Either read failing is an
// error, and stops the other. seq are the reads when the remembered issues
// come with the first read by id instead (embedded mode; nil: not run).
func TestReadyAhead(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		store *fakeStore
		hint  []string
		calls []string
		seq   []string
		read  []string
		err   error
	}{
		{
			name:  "the common case: nothing remembered, one bd process",
			store: store("e open* -", "e.1 open* e", "x open* -", "x.1 open* x"),
			calls: []string{"ready"},
			seq:   []string{"ready"},
		},
		{
			name:  "remembered and all that is needed: two reads at once, no third",
			store: store("e open* -", "e.1 open* e", "x in_progress -", "x.1 open* x", "e.2 closed e", "e.2.1 open* e.2"),
			hint:  []string{"e.2", "x"},
			calls: []string{"ready", "list e.2,x"},
			seq:   []string{"ready", "list e.2,x"},
			read:  []string{"e.2", "x"},
		},
		{
			name:  "an epic newly not ready: read after, and remembered with the rest",
			store: store("e open* -", "e.1 open* e", "x in_progress -", "x.1 open* x", "y deferred -", "y.1 open* y"),
			hint:  []string{"x"},
			calls: []string{"ready", "list x", "list y"},
			seq:   []string{"ready", "list x,y"},
			read:  []string{"x", "y"},
		},
		{
			name:  "a remembered sub-epic moved out of the epic: its link is read afresh",
			store: store("e open* -", "x open* -", "e.1 in_progress x", "e.1.1 open* e.1"),
			hint:  []string{"e.1"},
			calls: []string{"ready", "list e.1"},
			seq:   []string{"ready", "list e.1"},
			read:  []string{"e.1"},
		},
		{
			name:  "remembered but ready again: read once for nothing, then forgotten",
			store: store("e open* -", "e.1 open* e", "x open* -", "x.1 open* x"),
			hint:  []string{"x"},
			calls: []string{"ready", "list x"},
			seq:   []string{"ready"},
		},
		{
			name:  "remembered but deleted since: not needed, forgotten",
			store: store("e open* -", "e.1 open* e"),
			hint:  []string{"gone"},
			calls: []string{"ready", "list gone"},
			seq:   []string{"ready"},
		},
		{
			name:  "remembered, deleted, still named by a chain: the slow query",
			store: store("e open* -", "e.1 open* e", "t open* gone"),
			hint:  []string{"gone"},
			calls: []string{"ready", "list gone", "parent e"},
			seq:   []string{"ready", "list gone", "parent e"},
			read:  []string{"gone"},
		},
		{
			name: "the read ahead fails: an error, never no work",
			store: func() *fakeStore {
				s := store("e open* -", "x in_progress -", "x.1 open* x")
				s.listErr = boom
				return s
			}(),
			hint:  []string{"x"},
			calls: []string{"ready", "list x"},
			seq:   []string{"ready", "list x"},
			err:   boom,
		},
		{
			name: "bd ready fails beside the read ahead: an error",
			store: func() *fakeStore {
				s := store("e open* -", "x in_progress -", "x.1 open* x")
				s.readyErr = boom
				return s
			}(),
			hint:  []string{"x"},
			calls: []string{"ready", "list x"},
			seq:   []string{"ready"},
			err:   boom,
		},
		{
			name: "bd ready fails alone: an error",
			store: func() *fakeStore {
				s := store("e open* -", "e.1 open* e")
				s.readyErr = boom
				return s
			}(),
			calls: []string{"ready"},
			seq:   []string{"ready"},
			err:   boom,
		},
		{
			name: "the read ahead fails while bd ready hangs: bd ready is stopped, the failure is the error",
			store: func() *fakeStore {
				s := store("e open* -", "x in_progress -", "x.1 open* x")
				s.listErr, s.readyHang = boom, true
				return s
			}(),
			hint:  []string{"x"},
			calls: []string{"ready", "list x"},
			err:   boom,
		},
	}
	for _, tt := range tests {
		for _, together := range []bool{true, false} {
			want := tt.calls
			if !together {
				want = tt.seq
			}
			if want == nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/together=%v", tt.name, together), func(t *testing.T) {
				s := tt.store
				s.calls, s.meet, s.apart = nil, nil, false
				if together && len(tt.hint) > 0 {
					s.meet, s.left = make(chan struct{}), 2
				}
				got, read, err := readyUnder(context.Background(), "e", tt.hint, together && len(tt.hint) > 0, s)
				if together && (!sameCalls(s.calls, want) || s.apart) {
					t.Errorf("bd reads %q (apart: %v), want %q, the first two at once", s.calls, s.apart, want)
				}
				if !together && !slices.Equal(s.calls, want) {
					t.Errorf("bd reads %q, want %q", s.calls, want)
				}
				if tt.err != nil {
					if !errors.Is(err, tt.err) || got != nil {
						t.Fatalf("readyUnder = %v, %v; want no list and %v", got, err, tt.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := s.oracle("e"); !slices.EqualFunc(got, want, func(a, b Issue) bool { return a.ID == b.ID }) {
					t.Errorf("readyUnder = %v, bd ready --parent = %v", issueIDs(got), issueIDs(want))
				}
				if !slices.Equal(read, tt.read) {
					t.Errorf("remembered %q, want %q", read, tt.read)
				}
			})
		}
	}
}

func issueIDs(issues []Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.ID)
	}
	return out
}

// TestServerMode: the store's mode is read from its metadata.json, the
// store found as bd finds it (Dir, BEADS_DIR, the nearest .beads above
// WorkDir); anything unknown is not server mode.
func TestServerMode(t *testing.T) {
	root := t.TempDir()
	store := func(dir, meta string) string {
		d := filepath.Join(root, dir, ".beads")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if meta != "" {
			if err := os.WriteFile(filepath.Join(d, "metadata.json"), []byte(meta), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	server := store("srv", `{"backend":"dolt","dolt_mode":"server","dolt_server_port":3307}`)
	embedded := store("emb", `{"backend":"dolt","dolt_mode":"embedded"}`)
	store("bad", `{"dolt_mode":`)
	store("none", "")
	deep := filepath.Join(root, "srv", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		c    Client
		want bool
	}{
		{"Dir in server mode", Client{Dir: server}, true},
		{"Dir embedded", Client{Dir: embedded}, false},
		{"BEADS_DIR in bd's environment", Client{Env: []string{"BEADS_DIR=" + server}}, true},
		{"the nearest .beads above WorkDir", Client{WorkDir: deep, Env: []string{}}, true},
		{"Dir wins over WorkDir", Client{Dir: embedded, WorkDir: deep}, false},
		{"corrupt metadata", Client{WorkDir: filepath.Join(root, "bad"), Env: []string{}}, false},
		{"no metadata", Client{WorkDir: filepath.Join(root, "none"), Env: []string{}}, false},
		{"no store", Client{Dir: filepath.Join(root, "nowhere")}, false},
	} {
		if got := tt.c.serverMode(); got != tt.want {
			t.Errorf("%s: serverMode = %v, want %v", tt.name, got, tt.want)
		}
	}
}
