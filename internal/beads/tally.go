package beads

import (
	"context"
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

// Tally counts the epic's Descendants. An epic that is not in the store is
// an *Error of kind KindNotFound.
func (c *Client) Tally(ctx context.Context, epic string) (Tally, error) {
	all, err := query[[]Issue](ctx, c, nil, tallyArgs...)
	if err != nil {
		return Tally{}, err
	}
	return Moment{All: all}.Tally(epic)
}

// Descendants reads every issue, closed ones included, in one bd query
// (bd list --all): the epic and its whole subtree, with titles, assignees
// and closed times. An epic that is not in the store is an *Error of kind
// KindNotFound.
func (c *Client) Descendants(ctx context.Context, epic string) (Issue, []Issue, error) {
	all, err := query[[]Issue](ctx, c, nil, tallyArgs...)
	if err != nil {
		return Issue{}, nil, err
	}
	return Moment{All: all}.Descendants(epic)
}
