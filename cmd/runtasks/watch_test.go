package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/status"
	"github.com/runtasks/runtasks/internal/watch"
)

// Without a terminal, --watch prints a new plain table each time a loop's
// state changes, until interrupted; writes that change no loop's state
// (here a state file rewritten) while 10 s pass print nothing.
func TestStatusWatchPlain(t *testing.T) {
	store := statusFixture(t)
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	now := statusNow
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	opts := &statusOptions{Options: status.Options{Store: store}, Watch: true, Factory: &Factory{Out: &out, Now: clock}, Loc: time.UTC}
	done := make(chan error, 1)
	go func() { done <- runStatus(ctx, opts) }()
	waitOut := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(out.String(), "SESSION  EPIC") < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d table(s) printed after 10s, want %d:\n%s", strings.Count(out.String(), "SESSION  EPIC"), n, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitOut(1)
	time.Sleep(100 * time.Millisecond) // the watcher is set up
	for range 5 {
		mu.Lock()
		now = now.Add(2 * time.Second)
		mu.Unlock()
		if _, err := store.Update("s1", "bd-a", func(st *state.State) error { st.UpdatedAt = clock(); return nil }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * watch.Debounce)
	}
	if n := strings.Count(out.String(), "SESSION  EPIC"); n != 1 {
		t.Fatalf("%d tables while no loop's state changed, want 1:\n%s", n, out.String())
	}
	if _, err := store.Update("s9", "bd-c", func(st *state.State) error {
		st.Cycles, st.Last = 7, &state.Record{Session: "s9", Epic: "bd-c", Outcome: state.OutcomeContinue, Block: true, Cycle: 7, Max: 50}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	waitOut(2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	second := out.String()[strings.LastIndex(out.String(), "--- "):]
	if !strings.Contains(second, "s9") || !strings.Contains(second, "7/50") {
		t.Errorf("the second table lacks the new session:\n%s", second)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
