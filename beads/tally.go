package beads

import (
	"context"
	"fmt"
)

// Tally counts an epic's descendants (the whole subtree, sub-epics
// included) by whether they are closed: the progress of an epic.
type Tally struct {
	Closed int `json:"closed"`
	Total  int `json:"total"`
}

// Tally reads every issue, closed ones included, in one bd query
// (bd list --all) and counts the epic's descendants. An epic that is not in
// the store is an *Error of kind KindNotFound.
func (c *Client) Tally(ctx context.Context, epic string) (Tally, error) {
	var all []Issue
	args := []string{"list", "--json", "--limit", "0", "--all"}
	if err := c.query(ctx, &all, args...); err != nil {
		return Tally{}, err
	}
	found := false
	for _, is := range all {
		if is.ID == epic {
			found = true
			break
		}
	}
	if !found {
		return Tally{}, &Error{Kind: KindNotFound, Args: args, Msg: fmt.Sprintf("no issue found matching %q", epic)}
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
