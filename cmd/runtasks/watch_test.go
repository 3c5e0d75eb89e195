package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/runtasks/runtasks/orchestrator"
)

// screen is a pseudo-terminal of 80x24 with a terminal emulator reading
// what runtasks draws on it.
type screen struct {
	t    *testing.T
	ptmx *os.File
	tty  *os.File
	emu  *vt.SafeEmulator
}

func newScreen(t *testing.T) *screen {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err) // a sandbox without /dev/ptmx
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, ptmx: ptmx, tty: tty, emu: vt.NewSafeEmulator(80, 24)}
	go io.Copy(s.emu, ptmx) // what runtasks draws
	go io.Copy(ptmx, s.emu) // the terminal's answers to its queries
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	return s
}

// waitFor waits until every want is on the screen and returns the screen.
func (s *screen) waitFor(what string, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		text := s.emu.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return text
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: %q not on the 80x24 screen after 15s:\n%s", what, missing, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lineOf is the 0-based screen line holding sub (-1 when none).
func lineOf(text, sub string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

// A scripted session blocks, claims a task and completes while another
// escalates: the 80x24 view follows the state directory, the bar moves,
// the escalation comes first, w shows the full reason and q quits.
func TestStatusWatchPseudoTerminal(t *testing.T) {
	scr := newScreen(t)
	store := &orchestrator.Store{Dir: filepath.Join(t.TempDir(), ".runtasks")}
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	stop := func(session, epic string, out orchestrator.Outcome, block bool, cycle, remaining int, why, reason string, tokens int64) {
		t.Helper()
		rec := orchestrator.Record{Time: now, Session: session, Epic: epic, Agent: "claude", Event: "Stop", Outcome: out,
			Block: block, Cycle: cycle, Max: 50, Why: why,
			Counts: &orchestrator.Counts{Ready: min(remaining, 1), Remaining: remaining}}
		if err := store.Append(rec); err != nil {
			t.Fatal(err)
		}
		_, err := store.Update(session, epic, func(st *orchestrator.State) error {
			st.Cycles, st.Last, st.UpdatedAt = cycle, &rec, now
			if block && st.FirstBlockAt.IsZero() {
				st.FirstBlockAt = now.Add(-90 * time.Minute)
			}
			if reason != "" {
				st.LastReason = reason
			}
			st.Spent.Input += tokens
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Before the view starts: s1 blocked once on bd-a, three tasks open.
	stop("s1", "bd-a", orchestrator.OutcomeContinue, true, 1, 3, "work remains: 1 ready", "You are the orchestrator for beads epic bd-a.\nruntasks: cycle 1/50 · 1 ready", 1200)

	opts := &statusOptions{Store: store, MaxCycles: 50, Watch: true, TTY: &statusTTY{In: scr.tty, Out: scr.tty},
		Now: func() time.Time { return now.Add(2 * time.Minute) }, Out: io.Discard, Err: io.Discard}
	done := make(chan error, 1)
	go func() { done <- runStatus(context.Background(), opts) }()

	text := scr.waitFor("start", "runtasks · 1 loop(s)", "s1", "bd-a", "[----------] 0/3", "cycle 1/50", "1.2k",
		"work remains: 1 ready", "2m ago", "running 1h32m", "q quit")
	t.Logf("start:\n%s", text)

	// s1 claims bd-a.1 and closes one task: the bar moves.
	if _, err := store.UpdateBinding("s1", func(b *orchestrator.Binding) error {
		b.Claims = append(b.Claims, orchestrator.ClaimedRun{Task: "bd-a.1", ClaimedAt: now})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop("s1", "bd-a", orchestrator.OutcomeContinue, true, 2, 2, "work remains: 1 ready", "", 800)
	text = scr.waitFor("claim", "[###-------] 1/3", "cycle 2/50", "claimed bd-a.1", "2k")

	// Another session escalates: it comes first, marked.
	stop("s2", "bd-b", orchestrator.OutcomeEscalated, false, 0, 1, "all remaining work is blocked or deferred", "", 0)
	text = scr.waitFor("escalation", "2 loop(s)", "1 need(s) a person", "! s2")
	if a, b := lineOf(text, "! s2"), lineOf(text, "s1 "); a < 0 || b < 0 || a > b {
		t.Errorf("the escalation is not at the top (s2 on line %d, s1 on line %d):\n%s", a, b, text)
	}

	// s1 completes: the bar is full.
	stop("s1", "bd-a", orchestrator.OutcomeComplete, false, 0, 0, "promise confirmed by beads", "", 500)
	text = scr.waitFor("complete", "[##########] 3/3", "complete · promise confirmed")
	t.Logf("complete:\n%s", text)
	updateWatchScreenshot(t, scr.emu)
	for i, l := range strings.Split(text, "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line %d is %d wide: %q", i, w, l)
		}
	}

	// w shows the full reason last fed back to the selected loop (s2 has
	// none); down selects s1.
	scr.ptmx.WriteString("j")
	scr.ptmx.WriteString("w")
	scr.waitFor("reason", "Last reason fed back to s1", "You are the orchestrator for beads epic bd-a.")

	// q quits cleanly: runStatus returns, the main screen is back.
	scr.ptmx.WriteString("q")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("status --watch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit within 10s")
	}
	if strings.Contains(scr.emu.String(), "q quit") {
		time.Sleep(200 * time.Millisecond)
		if strings.Contains(scr.emu.String(), "q quit") {
			t.Errorf("the view is still on the screen after q:\n%s", scr.emu.String())
		}
	}
}

// Without a terminal, --watch prints a new plain table on each change of
// the state directory, until interrupted.
func TestStatusWatchPlain(t *testing.T) {
	store := statusFixture(t)
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := &statusOptions{Store: store, MaxCycles: 50, Watch: true, Out: &out, Err: io.Discard,
		Now: func() time.Time { return statusNow }, Loc: time.UTC}
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
	if _, err := store.Update("s9", "bd-c", func(st *orchestrator.State) error { st.Cycles = 7; return nil }); err != nil {
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
