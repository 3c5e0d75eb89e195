package watch

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
)

// A finished process's pid: a run recorded as running with it is dead.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	return cmd.Process.Pid
}

func TestLoadRuns(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	put := func(st headless.RunState) {
		b, _ := json.Marshal(st)
		os.MkdirAll(filepath.Join(dir, st.RunID), 0o755)
		if err := os.WriteFile(filepath.Join(dir, st.RunID, headless.RunFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(headless.RunState{RunID: "r-live", Epic: "bd-a", Agent: "claude", Status: "running", PID: os.Getpid(), Cycle: 2, MaxCycles: 20,
		StartedAt: now.Add(-5 * time.Minute), Closed: 1, Total: 4, Cycles: []headless.CycleRecord{{N: 1}, {N: 2}}})
	put(headless.RunState{RunID: "r-dead", Epic: "bd-b", Agent: "codex", Status: "running", PID: deadPID(t), StartedAt: now.Add(-time.Hour)})
	put(headless.RunState{RunID: "r-done", Epic: "bd-c", Status: "complete", StartedAt: now.Add(-2 * time.Hour)})

	store := &state.Store{Dir: filepath.Join(t.TempDir(), ".runtasks")}
	snap, err := Load(store, dir)
	if err != nil {
		t.Fatal(err)
	}
	runs := snap.Runs
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	if got := strings.Join(ids, ","); got != "r-live,r-dead" {
		t.Fatalf("live runs = %s, want r-live,r-dead (finished runs left out, newest first)", got)
	}
	if runs[0].Status != "running" || runs[1].Status != headless.StatusDead {
		t.Errorf("status = %v, %v; want running, dead", runs[0].Status, runs[1].Status)
	}
	if got, err := Load(store, filepath.Join(dir, "none")); err != nil || got.Runs != nil {
		t.Errorf("missing folder: %v, %v", got.Runs, err)
	}

	m := Model{Now: func() time.Time { return now }}
	m.snap = Snapshot{Runs: runs}
	m.width, m.height = 80, 24
	view := m.View().Content
	for _, want := range []string{"runtasks run · 2", "run r-live", "[##--------] 1/4", "cycle 2/20", "running 5m", "run r-dead", "dead"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "No loop yet") {
		t.Errorf("a view with runs says there is no loop:\n%s", view)
	}
}
