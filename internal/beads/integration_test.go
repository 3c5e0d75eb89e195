package beads_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// snapshot is an epic, its ready descendants and its unclosed subtree.
type snapshot struct {
	Epic           beads.Issue
	Ready, Subtree []beads.Issue
}

// WithStatus returns the subtree issues whose stored status is one of statuses.
func (s snapshot) WithStatus(statuses ...string) []beads.Issue {
	return slices.DeleteFunc(slices.Clone(s.Subtree), func(is beads.Issue) bool { return !slices.Contains(statuses, is.Status) })
}

// DependencyBlocked returns the subtree issues waiting on open blockers.
func (s snapshot) DependencyBlocked() []beads.Issue {
	return slices.DeleteFunc(slices.Clone(s.Subtree), func(is beads.Issue) bool { return len(is.BlockedBy) == 0 })
}

// TestIntegrationSnapshot builds a store with the real bd holding an epic, a
// sub-epic, tasks, dependencies and every status, and compares the client's
// snapshot with it.
func TestIntegrationSnapshot(t *testing.T) {
	t.Parallel()
	s := beadstest.NewStore(t, "it")
	epic := s.Create("Epic", "--type", "epic")
	open := s.Create("open task", "--parent", epic)
	wip := s.Create("in progress", "--parent", epic)
	stuck := s.Create("stored blocked", "--parent", epic)
	later := s.Create("deferred", "--parent", epic)
	done := s.Create("closed", "--parent", epic)
	pinned := s.Create("pinned", "--parent", epic)
	sub := s.Create("Sub-epic", "--type", "epic", "--parent", epic)
	grand := s.Create("grandchild", "--parent", sub)
	waits := s.Create("waits on grandchild", "--parent", epic)
	afterDone := s.Create("blocker closed", "--parent", epic)
	other := s.Create("unrelated")
	s.Status(wip, beads.StatusInProgress)
	s.Status(stuck, beads.StatusBlocked)
	s.Status(later, beads.StatusDeferred)
	s.Status(pinned, beads.StatusPinned)
	s.Block(waits, grand)
	s.Block(afterDone, done)
	s.Close(done)

	c := &beads.Client{WorkDir: s.Root, Env: s.Env}
	ctx := context.Background()
	var snap snapshot
	var err error
	if snap.Epic, err = c.Show(ctx, epic); err == nil {
		if snap.Ready, err = c.Ready(ctx, epic); err == nil {
			snap.Subtree, err = c.Subtree(ctx, epic)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if snap.Epic.ID != epic || snap.Epic.IssueType != "epic" {
		t.Errorf("epic = %+v", snap.Epic)
	}
	check := func(what string, got []beads.Issue, want ...string) {
		t.Helper()
		slices.Sort(want)
		if !slices.Equal(ids(got), want) {
			t.Errorf("%s = %v, want %v", what, ids(got), want)
		}
	}
	check("ready", snap.Ready, open, sub, grand, afterDone)
	check("subtree", snap.Subtree, open, wip, stuck, later, sub, grand, waits, afterDone)
	check("in progress", snap.WithStatus(beads.StatusInProgress), wip)
	check("stored blocked", snap.WithStatus(beads.StatusBlocked), stuck)
	check("deferred", snap.WithStatus(beads.StatusDeferred), later)
	check("dependency blocked", snap.DependencyBlocked(), waits)
	for _, is := range snap.Subtree {
		if is.ID == other || is.ID == epic {
			t.Errorf("subtree holds %s", is.ID)
		}
	}

	// bd blocked --parent agrees with the subtree's dependency-blocked issues.
	var blocked []beads.Issue
	if err := beads.Decode([]byte(s.BD("blocked", "--json", "--parent", epic)), &blocked); err != nil {
		t.Fatal(err)
	}
	check("bd blocked", blocked, waits)

	// The envelope bd 2.0 will default to decodes the same.
	env := &beads.Client{WorkDir: s.Root, Env: append(slices.Clone(s.Env), "BD_JSON_ENVELOPE=1")}
	ready, err := env.Ready(ctx, epic)
	if err != nil {
		t.Fatal(err)
	}
	check("ready (envelope)", ready, open, sub, grand, afterDone)

	// BEADS_DIR selects the store from anywhere.
	byDir := &beads.Client{Dir: filepath.Join(s.Root, ".beads"), WorkDir: t.TempDir(), Env: s.Env}
	if _, err := byDir.Show(ctx, epic); err != nil {
		t.Errorf("Show with BEADS_DIR: %v", err)
	}

	v, err := c.Version(ctx)
	if err != nil || v != "1.3.0" {
		t.Errorf("Version = %q, %v; want 1.3.0", v, err)
	}
}

func TestIntegrationClaim(t *testing.T) {
	t.Parallel()
	s := beadstest.NewStore(t, "cl")
	epic := s.Create("Epic", "--type", "epic")
	sub := s.Create("Sub", "--type", "epic", "--parent", epic, "--priority", "0")
	task := s.Create("task", "--parent", sub, "--priority", "1")
	c := &beads.Client{WorkDir: s.Root, Env: s.Env}
	ctx := context.Background()

	got, err := c.ClaimID(ctx, task, "alice")
	if err != nil || got.ID != task || got.Status != beads.StatusInProgress || got.Assignee != "alice" {
		t.Fatalf("ClaimID = %+v, %v; want %s in progress for alice", got, err, task)
	}
	if ready, err := c.Ready(ctx, epic); err != nil || slices.Contains(ids(ready), task) {
		t.Errorf("Ready after the claim = %v, %v; want the task gone", ids(ready), err)
	}
	if _, err := c.ClaimID(ctx, task, "bob"); err == nil {
		t.Errorf("bob claimed alice's task")
	}
	is, err := c.AppendNotes(ctx, task, "progress: half")
	if err != nil || is.Notes != "progress: half" {
		t.Errorf("AppendNotes = %q, %v", is.Notes, err)
	}
}

func TestIntegrationErrors(t *testing.T) {
	t.Parallel()
	s := beadstest.NewStore(t, "er")
	ctx := context.Background()
	c := &beads.Client{WorkDir: s.Root, Env: s.Env}

	// An unknown epic: ready says [] (bd does not validate), show says no.
	if ready, err := c.Ready(ctx, "er-nope"); err != nil || len(ready) != 0 {
		t.Errorf("Ready(unknown) = %v, %v", ready, err)
	}
	if _, err := c.Show(ctx, "er-nope"); !beads.IsKind(err, beads.KindNotFound) {
		t.Errorf("Show(unknown) error = %v, want not_found", err)
	}

	// No store: a directory outside any repository.
	none := &beads.Client{WorkDir: t.TempDir(), Env: s.Env}
	if _, err := none.Ready(ctx, "er-1"); !beads.IsKind(err, beads.KindNoStore) {
		t.Errorf("Ready without a store: %v, want no_store", err)
	}

	// bd missing.
	missing := &beads.Client{Bin: "bd-that-does-not-exist", WorkDir: s.Root, Env: s.Env}
	if _, err := missing.Ready(ctx, "er-1"); !beads.IsKind(err, beads.KindMissing) {
		t.Errorf("missing bd: %v", err)
	}

	// A bd that hangs: a script that sleeps stands in for a wedged store.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	hang := filepath.Join(t.TempDir(), "bd")
	if err := os.WriteFile(hang, []byte("#!"+sh+"\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	slow := &beads.Client{Bin: hang, WorkDir: s.Root, Env: s.Env, Timeout: 500 * time.Millisecond}
	if _, err := slow.Ready(ctx, "er-1"); !beads.IsKind(err, beads.KindTimeout) {
		t.Errorf("hanging bd: %v, want timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("hanging bd held the caller for %s", d)
	}
}

// TestIntegrationLeases: a claim's lease is renewed by its holder only;
// reclaim leaves a live lease alone; the holder gives its task back open,
// unassigned and with the reason in the notes, and another actor claims it.
func TestIntegrationLeases(t *testing.T) {
	t.Parallel()
	s := beadstest.NewStore(t, "ls")
	epic := s.Create("Epic", "--type", "epic")
	task := s.Create("task", "--parent", epic)
	c := &beads.Client{WorkDir: s.Root, Env: s.Env}
	ctx := context.Background()
	is, err := c.ClaimID(ctx, task, "w1")
	if err != nil || is.Assignee != "w1" || is.LeaseExpiresAt.IsZero() {
		t.Fatalf("claim: %+v %v", is, err)
	}
	if err := c.Heartbeat(ctx, task, "w1"); err != nil {
		t.Errorf("heartbeat by the holder: %v", err)
	}
	if err := c.Heartbeat(ctx, task, "w2"); err == nil || !strings.Contains(err.Error(), "already claimed by w1") {
		t.Errorf("heartbeat by another actor: %v, want bd's refusal", err)
	}
	if got, err := c.Reclaim(ctx, task); err != nil || len(got) != 0 {
		t.Errorf("reclaim of a live lease = %v, %v; want nothing", got, err)
	}
	if _, err := c.ClaimID(ctx, task, "w2"); err == nil {
		t.Error("a second actor claimed a held task")
	}
	is, err = c.Release(ctx, task, "w1", "merge failed: conflict in a.go")
	if err != nil || is.Status != beads.StatusOpen || is.Assignee != "" || !strings.Contains(is.Notes, "merge failed") {
		t.Fatalf("release: %+v %v", is, err)
	}
	if is, err = c.ClaimID(ctx, task, "w2"); err != nil || is.Assignee != "w2" {
		t.Fatalf("claim after release: %+v %v", is, err)
	}
}
