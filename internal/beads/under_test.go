package beads_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads"
)

// iss is an issue with an id, a status and parents (the first is the parent
// field; the rest are extra parent-child rows).
func iss(id, status string, parents ...string) beads.Issue {
	is := beads.Issue{ID: id, Status: status}
	for i, p := range parents {
		if i == 0 {
			is.Parent = p
			continue
		}
		is.Dependencies = append(is.Dependencies, beads.Dependency{IssueID: id, DependsOnID: p, Type: beads.DepParentChild})
	}
	return is
}

func TestUnder(t *testing.T) {
	open, wip := beads.StatusOpen, beads.StatusInProgress
	tests := []struct {
		name        string
		ready       []beads.Issue
		known       []beads.Issue
		in, missing []string
	}{
		{
			name:  "flat epic: the epic itself and other work are left out",
			ready: []beads.Issue{iss("e", open), iss("e.1", open, "e"), iss("x", open), iss("x.1", open, "x"), iss("e.2", open, "e")},
			in:    []string{"e.1", "e.2"},
		},
		{
			name: "a hierarchical id whose parent link was removed stays the epic's (bd's rule); one with another parent does not",
			ready: []beads.Issue{iss("e.1", open), iss("e.2", open, "x"), iss("x", open), iss("e.3.1", open),
				iss("ex.1", open)},
			in: []string{"e.1", "e.3.1"},
		},
		{
			name:  "nested under a ready sub-epic",
			ready: []beads.Issue{iss("e.1", open, "e"), iss("e.1.1", open, "e.1"), iss("e.1.1.1", open, "e.1.1")},
			in:    []string{"e.1", "e.1.1", "e.1.1.1"},
		},
		{
			name:    "under a sub-epic that is not ready and not known: its parents are missing",
			ready:   []beads.Issue{iss("e.1", open, "e"), iss("e.2.1", open, "e.2"), iss("x.1", open, "x")},
			in:      []string{"e.1"},
			missing: []string{"e.2", "x"},
		},
		{
			name:  "a chain that ends at a top-level issue is out, whatever is unknown elsewhere in it",
			ready: []beads.Issue{iss("x.1", open, "x"), iss("x", open), iss("y.1.1", open, "y.1")},
			known: []beads.Issue{iss("y.1", beads.StatusClosed, "y"), iss("y", wip)},
		},
		{
			name:  "an issue already in does not need its other, unknown parent",
			ready: []beads.Issue{iss("t", open, "e", "u")},
			in:    []string{"t"},
		},
		{
			name:  "an unknown issue with nothing ready below it is not needed",
			ready: []beads.Issue{iss("e.1", open, "e")},
			known: []beads.Issue{iss("z", wip, "w")},
			in:    []string{"e.1"},
		},
		{
			name:    "up a chain: a known closed sub-epic whose parent is not known yet",
			ready:   []beads.Issue{iss("t", open, "b")},
			known:   []beads.Issue{iss("b", wip, "a")},
			missing: []string{"a"},
		},
		{
			name:  "a chain through a closed and a deferred sub-epic reaches the epic",
			ready: []beads.Issue{iss("t", open, "b")},
			known: []beads.Issue{iss("b", beads.StatusDeferred, "a"), iss("a", beads.StatusClosed, "e")},
			in:    []string{"t"},
		},
		{
			name:  "a sub-epic in progress, known from the list",
			ready: []beads.Issue{iss("e.1", open, "e"), iss("e.2.1", open, "e.2"), iss("x.1", open, "x")},
			known: []beads.Issue{iss("e.2", wip, "e"), iss("x", wip)},
			in:    []string{"e.1", "e.2.1"},
		},
		{
			name:  "a sub-epic moved out: its fresh parent counts",
			ready: []beads.Issue{iss("e.2", open, "x"), iss("e.2.1", open, "e.2"), iss("x", open)},
			in:    nil,
		},
		{
			name:  "a task moved in from elsewhere",
			ready: []beads.Issue{iss("x.1", open, "e"), iss("x", open)},
			in:    []string{"x.1"},
		},
		{
			name:  "a second parent inside the epic is enough",
			ready: []beads.Issue{iss("x.1", open, "x", "e.1"), iss("x", open), iss("e.1", open, "e")},
			in:    []string{"x.1", "e.1"},
		},
		{
			name:    "a second parent that cannot be placed is missing",
			ready:   []beads.Issue{iss("x.1", open, "x", "y"), iss("x", open)},
			missing: []string{"y"},
		},
		{
			name:  "a parent cycle away from the epic is outside it",
			ready: []beads.Issue{iss("a", open, "b"), iss("b", open, "a")},
		},
		{
			name:  "a cycle does not hide the epic",
			ready: []beads.Issue{iss("a", open, "b", "e"), iss("b", open, "a")},
			in:    []string{"a", "b"},
		},
		{
			name:  "nothing ready",
			ready: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, missing := beads.Under("e", tt.ready, tt.known)
			var got []string
			for _, is := range in {
				got = append(got, is.ID)
			}
			if !slices.Equal(got, tt.in) {
				t.Errorf("in = %v, want %v (bd's order kept)", got, tt.in)
			}
			if !slices.Equal(missing, tt.missing) {
				t.Errorf("missing = %v, want %v", missing, tt.missing)
			}
		})
	}
}

// TestReadyRoutes checks the bd processes Ready runs: one cheap query when
// the ready answer proves every issue in or out, a bd list of the issues a
// chain runs through when they are not ready, and bd ready --parent when bd
// does not know one of them. A failure on any route is an error, never "no
// work". (placeReady's shapes: TestPlaceReady.)
func TestReadyRoutes(t *testing.T) {
	const (
		flat   = `[{"id":"e","status":"open","issue_type":"epic"},{"id":"e.1","status":"open","parent":"e"},{"id":"x.1","status":"open","parent":"x"},{"id":"x","status":"open"}]`
		nested = `[{"id":"e.2.1","status":"open","parent":"e.2"},{"id":"e.1","status":"open","parent":"e"}]`
		list   = `[{"id":"e.2","status":"in_progress","parent":"e"}]`
	)
	tests := []struct {
		name  string
		files map[string]string
		want  []string // ids, sorted
		calls string
		err   string
	}{
		{
			name:  "proved by the ready answer",
			files: map[string]string{"ready.json": flat},
			want:  []string{"e.1"},
			calls: "ready --json --limit 0\n",
		},
		{
			name:  "a sub-epic in progress: one list of it",
			files: map[string]string{"ready.json": nested, "list.json": list},
			want:  []string{"e.1", "e.2.1"},
			calls: "ready --json --limit 0\nlist --json --limit 0 --all --include-templates --include-gates --include-infra --id e.2\n",
		},
		{
			// The fake answers ready --parent with the same file: the
			// slow route returns it as it is.
			name:  "an ancestor bd does not know: the slow query",
			files: map[string]string{"ready.json": nested, "list.json": `[]`},
			want:  []string{"e.1", "e.2.1"},
			calls: "ready --json --limit 0\nlist --json --limit 0 --all --include-templates --include-gates --include-infra --id e.2\nready --json --limit 0 --parent e\n",
		},
		{
			name:  "ready fails",
			files: map[string]string{"ready.stderr": "Error: boom\n", "ready.rc": "1"},
			calls: "ready --json --limit 0\n",
			err:   "boom",
		},
		{
			name:  "the list fails",
			files: map[string]string{"ready.json": nested, "list.stderr": "Error: list boom\n", "list.rc": "1"},
			calls: "ready --json --limit 0\nlist --json --limit 0 --all --include-templates --include-gates --include-infra --id e.2\n",
			err:   "list boom",
		},
		{
			name:  "the list prints garbage",
			files: map[string]string{"ready.json": nested, "list.json": "No issues found."},
			calls: "ready --json --limit 0\nlist --json --limit 0 --all --include-templates --include-gates --include-infra --id e.2\n",
			err:   "unexpected output",
		},
		{
			name:  "garbage",
			files: map[string]string{"ready.json": "Showing 3 issues"},
			calls: "ready --json --limit 0\n",
			err:   "unexpected output",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, dir := fake(t, tt.files)
			got, err := c.Ready(context.Background(), "e")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || got != nil {
					t.Errorf("Ready = %v, %v; want no list and an error with %q", ids(got), err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if !slices.Equal(ids(got), tt.want) {
				t.Errorf("Ready = %v, want %v", ids(got), tt.want)
			}
			calls, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
			if string(calls) != tt.calls {
				t.Errorf("bd calls:\n%s\nwant:\n%s", calls, tt.calls)
			}
		})
	}
}

// TestClaimListsThenClaims: Claim never claims inside bd's ready query; it
// claims the first ready task, skipping epics and tasks another actor holds.
func TestClaimIDAlreadyClaimed(t *testing.T) {
	c, dir := fake(t, map[string]string{
		"update-e.2.json": `{"error":"1 of 1 issues failed to update","failed":[{"id":"e.2","error":"updating issue: issue already claimed by other"}]}`,
		"update-e.2.rc":   "1",
		"update-e.3.json": `[{"id":"e.3","status":"in_progress","assignee":"me"}]`,
	})
	ctx := context.Background()
	if _, err := c.ClaimID(ctx, "e.2", "me"); !beads.AlreadyClaimed(err) {
		t.Errorf("ClaimID(e.2) = %v, want already claimed", err)
	}
	got, err := c.ClaimID(ctx, "e.3", "me")
	if err != nil || got.ID != "e.3" || got.Assignee != "me" {
		t.Fatalf("ClaimID(e.3) = %+v, %v; want e.3 claimed", got, err)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
	want := "update e.2 --claim --json --actor me\nupdate e.3 --claim --json --actor me\n"
	if string(calls) != want {
		t.Errorf("bd calls:\n%s\nwant:\n%s", calls, want)
	}
}
