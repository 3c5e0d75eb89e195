package watch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/state"
)

// The view reads bd at most once every tallyEvery (from a read's end; the fake
// reads take microseconds), one epic per read, the stalest first (never
// read before anything read), in the background; a row's bar is its
// epic's tally once read, else what the decisions said; a failed read
// leaves the decisions' bar.
func TestProgressReadsBdAtMostOnceEvery(t *testing.T) {
	var mu sync.Mutex
	var reads []string
	updated := make(chan struct{}, 10)
	p := &Progress{
		Tally: func(_ context.Context, epic string) (beads.Tally, error) {
			mu.Lock()
			reads = append(reads, epic)
			mu.Unlock()
			if epic == "bd-broken" {
				return beads.Tally{}, errors.New("bd: database locked")
			}
			return beads.Tally{Closed: 2, Total: 5}, nil
		},
		Updated: func() { updated <- struct{}{} },
	}
	t0 := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	snapshot := func() Snapshot {
		return Snapshot{Rows: []Row{
			{State: state.State{Session: "s1", Epic: "bd-a"}, Closed: 1, Seen: 4},
			{State: state.State{Session: "s2", Epic: "bd-broken"}, Closed: 0, Seen: 2},
			{State: state.State{Session: "s3", Epic: "bd-a"}},
		}}
	}
	apply := func(at time.Duration) Snapshot {
		t.Helper()
		s := snapshot()
		p.Apply(context.Background(), &s, t0.Add(at))
		return s
	}
	waitRead := func() {
		t.Helper()
		select {
		case <-updated:
		case <-time.After(5 * time.Second):
			t.Fatal("no read finished")
		}
	}

	s := apply(0) // starts reading bd-a
	if s.Rows[0].Closed != 1 || s.Rows[0].Seen != 4 {
		t.Errorf("before any read the bar is the decisions': %+v", s.Rows[0])
	}
	waitRead()
	s = apply(time.Second) // too soon: no read
	if r := s.Rows[0]; r.Closed != 2 || r.Seen != 5 || s.Rows[2].Seen != 5 {
		t.Errorf("bd-a's rows after its read: %+v, %+v; want 2/5", r, s.Rows[2])
	}
	if p.Due(t0.Add(2 * time.Second)) {
		t.Error("a read is due 2s after the last one")
	}
	if !p.Due(t0.Add(3100 * time.Millisecond)) {
		t.Error("no read due 3s after the last one ended")
	}
	apply(3100 * time.Millisecond) // bd-broken, never read: fails
	for deadline := time.Now().Add(5 * time.Second); !p.Due(t0.Add(6500*time.Millisecond)) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the failed read ends
	}
	s = apply(4 * time.Second)
	if r := s.Rows[1]; r.Closed != 0 || r.Seen != 2 {
		t.Errorf("a failed read changed the bar: %+v", r)
	}
	apply(6500 * time.Millisecond) // bd-a again: read at 0, the stalest
	waitRead()
	mu.Lock()
	defer mu.Unlock()
	if got := len(reads); got != 3 || reads[0] != "bd-a" || reads[1] != "bd-broken" || reads[2] != "bd-a" {
		t.Errorf("bd reads = %v, want bd-a, bd-broken, bd-a (one per 3s)", reads)
	}
}

// Without a tracker the bars are the decisions' and nothing is due.
func TestProgressWithoutTally(t *testing.T) {
	var p *Progress
	s := Snapshot{Rows: []Row{{State: state.State{Epic: "bd-a"}, Closed: 1, Seen: 3}}}
	p.Apply(context.Background(), &s, time.Now())
	if s.Rows[0].Closed != 1 || p.Due(time.Now()) {
		t.Errorf("nil progress: %+v", s.Rows[0])
	}
}
