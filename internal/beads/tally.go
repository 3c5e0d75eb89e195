package beads

import (
	"context"
	"fmt"
	"slices"
)

// Tally counts an epic's descendants (the whole subtree, sub-epics
// included) by whether they are closed: the progress of an epic.
type Tally struct {
	Closed int `json:"closed"`
	Total  int `json:"total"`
}

// tallyArgs is the one bd query a tally reads: every issue, closed ones
// included.
var tallyArgs = []string{"list", "--json", "--limit", "0", "--all"}

// Tally reads every issue, closed ones included, in one bd query
// (bd list --all) and counts the epic's descendants. An epic that is not in
// the store is an *Error of kind KindNotFound.
func (c *Client) Tally(ctx context.Context, epic string) (Tally, error) {
	var all []Issue
	if err := c.query(ctx, &all, tallyArgs...); err != nil {
		return Tally{}, err
	}
	return tally(all, epic)
}

// tally counts epic's descendants in all (every issue of the store).
func tally(all []Issue, epic string) (Tally, error) {
	if !slices.ContainsFunc(all, func(is Issue) bool { return is.ID == epic }) {
		return Tally{}, &Error{Kind: KindNotFound, Args: tallyArgs, Msg: fmt.Sprintf("no issue found matching %q", epic)}
	}
	var t Tally
	for _, is := range descendants(all, all, epic) {
		t.Total++
		if is.Status == StatusClosed {
			t.Closed++
		}
	}
	return t, nil
}
