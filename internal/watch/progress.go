package watch

import (
	"context"
	"sync"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/state"
)

// tallyEvery is the least time between two tracker reads of a view.
const tallyEvery = 3 * time.Second

// Progress gives the rows' bars the epics' closed and total tasks from bd:
// a stop that finds ready work reads only `bd ready`, so decisions rarely
// count the whole epic. It reads at most once every tallyEvery, the stalest
// epic, in the background (bd serialises access to its store and the
// agents' calls come first). Until then, or when bd fails, a bar is what
// the decisions recorded.
type Progress struct {
	Tally   func(ctx context.Context, epic string) (beads.Tally, error)
	Updated func() // called after a read (from its goroutine)

	mu      sync.Mutex
	tallies map[string]beads.Tally
	readAt  map[string]time.Time
	last    time.Time
	busy    bool
}

// Apply sets the bars of the epics read, then starts reading the stalest
// shown epic when a read is due.
func (p *Progress) Apply(ctx context.Context, snap *Snapshot, now time.Time) {
	if p == nil || p.Tally == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	next, nextAt := "", time.Time{} // the stalest epic: never read first
	for i := range snap.Rows {
		r := &snap.Rows[i]
		if r.Epic == "" || r.Epic == state.NoEpic {
			continue
		}
		if t, ok := p.tallies[r.Epic]; ok && t.Total > 0 {
			r.Closed, r.Seen = t.Closed, t.Total
		}
		if at := p.readAt[r.Epic]; next == "" || at.Before(nextAt) {
			next, nextAt = r.Epic, at
		}
	}
	if next == "" || !p.due(now) {
		return
	}
	p.busy, p.last = true, now
	if p.readAt == nil {
		p.readAt, p.tallies = map[string]time.Time{}, map[string]beads.Tally{}
	}
	p.readAt[next] = now
	go func() {
		start := time.Now()
		t, err := p.Tally(ctx, next)
		p.mu.Lock()
		// The gap runs from the read's end: a slow bd is not read again at once.
		p.busy, p.last = false, now.Add(time.Since(start))
		if err == nil {
			p.tallies[next] = t
		}
		p.mu.Unlock()
		if err == nil && p.Updated != nil && ctx.Err() == nil {
			p.Updated()
		}
	}()
}

// Due reports whether a read may start now: the view reloads then, so that
// bd's changes between stops show.
func (p *Progress) Due(now time.Time) bool {
	if p == nil || p.Tally == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.due(now)
}

// due is Due with p.mu held.
func (p *Progress) due(now time.Time) bool {
	return !p.busy && (p.last.IsZero() || now.Sub(p.last) >= tallyEvery)
}
