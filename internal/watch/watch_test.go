package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		closed, seen int
		want         string
	}{
		{0, 0, "[··········] -"},
		{0, 3, "[----------] 0/3"},
		{1, 3, "[###-------] 1/3"},
		{3, 3, "[##########] 3/3"},
		{5, 3, "[##########] 5/3"},
	} {
		if got := bar(tc.closed, tc.seen, 10); got != tc.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tc.closed, tc.seen, got, tc.want)
		}
	}
}

// Text from agents and the tracker cannot move the cursor or overflow a
// line: control characters become spaces, widths are cut.
func TestCut(t *testing.T) {
	got := cut("why\x1b[2J\x1b]0;title\x07 done\nnext", 12)
	if strings.ContainsAny(got, "\x1b\x07\n") || len([]rune(got)) > 12 {
		t.Errorf("cut = %q", got)
	}
	if got := cut("界界界界界界", 7); got != "界界界…" {
		t.Errorf("wide runes: %q", got)
	}
}

func TestLoadOrder(t *testing.T) {
	store := &state.Store{Dir: filepath.Join(t.TempDir(), ".runtasks")}
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	put := func(session string, out state.Outcome, block bool, at time.Time, remaining int) {
		rec := state.Record{Time: at, Session: session, Epic: "bd-a", Outcome: out, Block: block, Cycle: 1, Max: 50,
			Counts: &state.Counts{Remaining: remaining}}
		store.Append(rec)
		store.Update(session, "bd-a", func(st *state.State) error { st.Last = &rec; return nil })
	}
	put("newest", state.OutcomeContinue, true, now, 2)
	put("older", state.OutcomeContinue, true, now.Add(-time.Hour), 4)
	put("capped", state.OutcomeCapReached, false, now.Add(-2*time.Hour), 3)
	put("warned", state.OutcomeNoProgress, true, now.Add(-3*time.Hour), 3)    // the warning block: goes on
	put("stopped", state.OutcomeInterrupted, false, now.Add(-4*time.Hour), 3) // Ctrl-C on run: no person needed
	snap, err := Load(store, "")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range snap.Rows {
		order = append(order, r.Session)
	}
	if got := strings.Join(order, " "); got != "capped newest older warned stopped" {
		t.Errorf("order = %s; want the capped loop first, then the latest stops", got)
	}
	if r := snap.Rows[1]; r.Seen != 4 || r.Closed != 2 || r.Last.Max != 50 {
		t.Errorf("progress of %s: %d/%d max %d; want 2/4 (the most work seen on bd-a is 4)", r.Session, r.Closed, r.Seen, r.Last.Max)
	}
	if snap.NeedsPerson != 1 {
		t.Errorf("NeedsPerson = %d", snap.NeedsPerson)
	}
}

// Two workers of one run and their runs stay apart at every width: ids are
// cut in the middle, keeping the worker's -wN and the run's suffix.
func TestRowsDistinguishable(t *testing.T) {
	now := time.Date(2026, 11, 27, 11, 45, 0, 0, time.UTC)
	m := Model{Now: func() time.Time { return now }}
	for _, w := range []string{"w1", "w2"} {
		m.snap.Rows = append(m.snap.Rows, Row{State: state.State{Session: "run-20261127T114002Z-17ab3f-" + w, Epic: "bd-e", Last: &state.Record{Max: 50, Time: now}}})
		m.snap.Runs = append(m.snap.Runs, headless.RunState{RunID: "20261127T114002Z-17ab3f-" + w, Epic: "bd-e", Status: "running", MaxCycles: 50, StartedAt: now})
	}
	for _, width := range []int{80, 140, 200} {
		m.width, m.height = width, 30
		lines := strings.Split(ansi.Strip(m.View().Content), "\n")
		var rows []string
		for _, l := range lines {
			if strings.Contains(l, "cycle 0/50") {
				rows = append(rows, l)
			}
			if ansi.StringWidth(l) > width {
				t.Errorf("%d columns: a line of %d: %q", width, ansi.StringWidth(l), l)
			}
		}
		if len(rows) != 4 || rows[0] == rows[1] || rows[2] == rows[3] || !strings.Contains(rows[1], "-w2") || !strings.Contains(rows[3], "-w2") {
			t.Errorf("%d columns: rows not told apart:\n%s", width, strings.Join(rows, "\n"))
		}
	}
}

// w shows the whole reason, wrapped to the width, never cut; ↓ scrolls
// what does not fit. A runtasks run worker shows the prompt its agent was
// given (its task), not the engine's reason.
func TestReasonWrappedAndGivenPrompt(t *testing.T) {
	var words []string
	for i := range 120 {
		words = append(words, fmt.Sprintf("word%03d", i))
	}
	reason := strings.Join(words[:60], " ") + "\n\n" + strings.Join(words[60:], " ") + strings.Repeat("x", 100)
	runs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(runs, "R-w2"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runs, "R-w2", headless.PromptFile), []byte("You are worker 2 of 2. Your task is bd-e.2: \x1b]0;t\x07Test it"), 0o600)
	m := Model{width: 40, height: 10, Now: time.Now}
	store := &state.Store{Dir: filepath.Join(t.TempDir(), ".runtasks")}
	store.Update("run-R-w2", "bd-e", func(st *state.State) error { st.LastReason = "You are the orchestrator"; return nil })
	snap, err := Load(store, runs)
	if err != nil || len(snap.Rows) != 1 {
		t.Fatalf("Load: %+v, %v", snap.Rows, err)
	}
	m.snap.Rows = append([]Row{{State: state.State{Session: "s1", LastReason: reason}}}, snap.Rows...)
	key := func(k string) { mm, _ := m.Update(tea.KeyPressMsg{Code: []rune(k)[0], Text: k}); m = mm.(Model) }
	key("w")
	var seen strings.Builder
	for range 30 {
		screen := ansi.Strip(m.View().Content)
		for _, l := range strings.Split(screen, "\n") {
			if ansi.StringWidth(l) > 40 || strings.Contains(l, "…") {
				t.Fatalf("a line cut or wider than 40: %q", l)
			}
		}
		seen.WriteString(screen)
		key("j")
	}
	for _, w := range append(words, strings.Repeat("x", 30)) {
		if !strings.Contains(seen.String(), w) {
			t.Fatalf("%s never shown:\n%s", w, seen.String())
		}
	}
	key("w")
	key("j")
	key("w")
	screen := ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "Prompt run-R-w2's agent was given:") || !strings.Contains(screen, "worker 2 of 2") || !strings.Contains(screen, "Test it") ||
		strings.Contains(screen, "orchestrator") || strings.Contains(screen, "\x1b") {
		t.Errorf("the worker's prompt:\n%s", screen)
	}
}

// A loop without recorded usage says so; it is never shown as free.
func TestRowSpent(t *testing.T) {
	now := time.Date(2026, 11, 27, 11, 45, 0, 0, time.UTC)
	m := Model{Now: func() time.Time { return now }}
	for _, tc := range []struct {
		spent usage.Spent
		want  string
	}{
		{usage.Spent{}, "not recorded"},
		{usage.Spent{Tokens: usage.Tokens{Input: 1200}, Cost: 0.04}, "1.2k $0.0400"},
		{usage.Spent{Tokens: usage.Tokens{Input: 1200}, Unpriced: 1200}, "1.2k ?"},
	} {
		line, _ := m.rowLines(Row{State: state.State{Session: "s1", Epic: "bd-a", Last: &state.Record{Max: 50}, Spent: tc.spent}}, 80, now)
		if got := ansi.Strip(line); !strings.HasSuffix(strings.TrimSpace(got), tc.want) {
			t.Errorf("spent %+v: %q, want it to end %q", tc.spent, got, tc.want)
		}
	}
}

// A tick when a tracker read is due reloads the snapshot; otherwise it only
// keeps the clock going.
func TestTickReloadsWhenDue(t *testing.T) {
	loads, due := 0, false
	m := Model{Now: time.Now, Due: func(time.Time) bool { return due },
		Load: func() (Snapshot, error) { loads++; return Snapshot{}, nil }}
	if _, cmd := m.Update(tick(time.Now())); cmd == nil {
		t.Fatal("a tick must schedule the next one")
	} else if _, ok := cmd().(tea.BatchMsg); ok || loads != 0 {
		t.Fatalf("a tick that is not due reloaded (loads %d)", loads)
	}
	due = true
	_, cmd := m.Update(tick(time.Now()))
	batch, ok := cmd().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("due tick: %T, want a batch of the reload and the next tick", cmd())
	}
	if _, ok := batch[0]().(loaded); !ok || loads != 1 {
		t.Fatalf("due tick did not reload: loads %d", loads)
	}
}
