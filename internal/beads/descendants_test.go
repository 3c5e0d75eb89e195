package beads

import (
	"slices"
	"testing"
)

// The subtree the engine counts: bd list's default answer (statuses,
// custom done kinds left out by bd), placed by the parent links of the
// whole store when a chain runs through an issue that answer leaves out.
func TestDescendants(t *testing.T) {
	is := func(id, status string, parents ...string) Issue {
		x := Issue{ID: id, Status: status}
		for _, p := range parents {
			x.Dependencies = append(x.Dependencies, Dependency{IssueID: id, DependsOnID: p, Type: DepParentChild})
		}
		return x
	}
	ids := func(list []Issue) []string {
		var out []string
		for _, x := range list {
			out = append(out, x.ID)
		}
		return out
	}
	// e.2 is a sub-epic closed with its child e.2.1 open; e.3 has a custom
	// "shipped" status bd's default list leaves out; e.4 lost its parent
	// link but keeps its hierarchical id; x.1 is another epic's.
	listed := []Issue{is("e.1", "open", "e"), is("e.2.1", "open", "e.2"), is("e.4", "open"), is("x.1", "open", "x")}
	all := append(slices.Clone(listed), is("e", "open"), is("e.2", "closed", "e"), is("e.3", "shipped", "e"), is("x", "closed"))
	if _, missing := Under("e", listed, nil); !slices.Equal(missing, []string{"e.2", "x"}) {
		t.Errorf("e.2.1's parent is not listed: the whole store's links are needed; missing %v", missing)
	}
	if _, missing := Under("e", []Issue{is("e.1", "open", "e")}, nil); len(missing) > 0 {
		t.Errorf("every parent listed (or the root): no second read; missing %v", missing)
	}
	if got, want := ids(descendants(listed, all, "e")), []string{"e.1", "e.2.1", "e.4"}; !slices.Equal(got, want) {
		t.Errorf("with the store's links: %v, want %v", got, want)
	}
	if got, want := ids(descendants(listed, listed, "e")), []string{"e.1", "e.4"}; !slices.Equal(got, want) {
		t.Errorf("with the list's own links: %v, want %v", got, want)
	}
}
