package beads_test

import (
	"context"
	"testing"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// TestIntegrationTally counts an epic's whole subtree, closed issues and
// sub-epics included, with the real bd; other epics' issues do not count.
func TestIntegrationTally(t *testing.T) {
	s := beadstest.NewStore(t, "ta")
	epic := s.Create("Epic", "--type", "epic")
	sub := s.Create("Sub-epic", "--type", "epic", "--parent", epic)
	t1 := s.Create("Task 1", "--parent", epic)
	s.Create("Task 2", "--parent", sub)
	t3 := s.Create("Task 3", "--parent", sub)
	other := s.Create("Other epic", "--type", "epic")
	s.Create("Other task", "--parent", other)
	s.Close(t1, t3)

	c := &beads.Client{WorkDir: s.Root, Bin: s.Bin, Env: s.Env}
	ctx := context.Background()
	got, err := c.Tally(ctx, epic)
	if err != nil {
		t.Fatal(err)
	}
	if want := (beads.Tally{Closed: 2, Total: 4}); got != want {
		t.Errorf("Tally(%s) = %+v, want %+v", epic, got, want)
	}
	if got, err := c.Tally(ctx, sub); err != nil || got != (beads.Tally{Closed: 1, Total: 2}) {
		t.Errorf("Tally(%s) = %+v, %v", sub, got, err)
	}
	if _, err := c.Tally(ctx, "ta-nope"); !beads.IsKind(err, beads.KindNotFound) {
		t.Errorf("Tally(unknown) error = %v, want not_found", err)
	}
}
