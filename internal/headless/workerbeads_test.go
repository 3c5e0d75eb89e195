package headless

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"testing"

	"github.com/runtasks/runtasks/internal/beads"
)

// Of the open tasks bd's ready list lacks, one whose blockers are all
// closed is omitted (Ready counts it); one never blocked straddled the
// moment's reads (read again); no other.
func TestUnready(t *testing.T) {
	blocks := []beads.Dependency{{Type: beads.DepBlocks, DependsOnID: "E.0"}}
	sub := []beads.Issue{
		{ID: "E.1", Status: beads.StatusOpen, Dependencies: blocks},                             // omitted by bd ready
		{ID: "E.2", Status: beads.StatusOpen, Dependencies: blocks},                             // listed
		{ID: "E.3", Status: beads.StatusOpen, Dependencies: blocks, BlockedBy: []string{"E.0"}}, // a blocker open
		{ID: "E.4", Status: beads.StatusOpen},                                                   // never blocked: changed between the reads
		{ID: "E.5", Status: beads.StatusBlocked, Dependencies: blocks},                          // quarantined
		{ID: "E.6", Status: beads.StatusOpen, IssueType: beads.TypeEpic, Dependencies: blocks},
	}
	ids := func(list []beads.Issue) (out []string) {
		for _, is := range list {
			out = append(out, is.ID)
		}
		return out
	}
	omitted, straddled := unready(sub, []beads.Issue{{ID: "E.2"}})
	if got := ids(omitted); !slices.Equal(got, []string{"E.1"}) {
		t.Errorf("omitted = %v, want [E.1]", got)
	}
	if got := ids(straddled); !slices.Equal(got, []string{"E.4"}) {
		t.Errorf("straddled = %v, want [E.4]", got)
	}
}

func TestNotTheTasks(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("start claude: %w", &exec.Error{Name: "claude", Err: exec.ErrNotFound}), true},
		{errors.New("claude reported an error: Invalid API key · Please run /login"), true},
		{errors.New("codex exited with exit status 1: 401 Unauthorized"), true},
		{errors.New("claude exited with exit status 2: panic: nil map"), false},
		{errors.New("claude reported an error: the tests failed"), false},
	} {
		if got := notTheTasks(c.err); got != c.want {
			t.Errorf("notTheTasks(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// twoMoments answers its first Moment as a task given back between bd's two
// reads (in progress for bd ready, open for bd list), then consistently.
type twoMoments struct {
	WorkerBeads
	reads int
}

func (f *twoMoments) Moment(context.Context) (beads.Moment, error) {
	f.reads++
	epic := beads.Issue{ID: "E", Status: beads.StatusOpen, IssueType: beads.TypeEpic}
	task := beads.Issue{ID: "E.1", Status: beads.StatusOpen, Parent: "E"}
	if f.reads == 1 {
		return beads.Moment{All: []beads.Issue{epic, task}}, nil
	}
	return beads.Moment{All: []beads.Issue{epic, task}, Ready: []beads.Issue{task}}, nil
}

// A moment in which an open task with no blocker is not ready changed
// between its reads: it is read again, so the task counts ready, not
// blocked (the loop would end needing a person while work is ready).
func TestMomentReadAgainWhenStraddled(t *testing.T) {
	f := &twoMoments{}
	v := &moments{WorkerBeads: f, epic: "E"}
	if err := v.refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	ready, err := v.Ready(context.Background(), "E")
	if f.reads != 2 || err != nil || len(ready) != 1 || ready[0].ID != "E.1" {
		t.Errorf("reads %d, ready %v, %v; want E.1 ready after a second read", f.reads, ready, err)
	}
}
