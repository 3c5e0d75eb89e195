package beads

import (
	"context"
	"fmt"
	"slices"
)

// Moment is the store as two bd calls saw it: every issue (bd list --all)
// and the ready ones (bd ready --limit 0). A worker reads one per cycle and
// answers the engine's queries from it.
type Moment struct{ All, Ready []Issue }

// Moment reads the store: bd ready --limit 0, then bd list --all. In that
// order a change between the two errs towards work left, as the engine's
// reads do: a task claimed or closed meanwhile is still ready.
func (c *Client) Moment(ctx context.Context) (m Moment, err error) {
	if m.Ready, err = c.ReadyAll(ctx); err != nil {
		return m, err
	}
	m.All, err = query[[]Issue](ctx, c, nil, tallyArgs...)
	return m, err
}

// ReadyUnder is Ready's answer for epic; ok is false when a chain of
// parents passes through an issue the moment does not hold.
func (m Moment) ReadyUnder(epic string) (in []Issue, ok bool) {
	in, missing := Under(epic, m.Ready, m.All)
	return in, len(missing) == 0
}

// Subtree is Client.Subtree's answer for epic.
func (m Moment) Subtree(epic string) []Issue {
	open := slices.DeleteFunc(slices.Clone(m.All), func(is Issue) bool { return is.Status == StatusClosed || is.Status == StatusPinned })
	return descendants(open, m.All, epic)
}

// Descendants is Client.Descendants' answer for epic.
func (m Moment) Descendants(epic string) (Issue, []Issue, error) {
	i := slices.IndexFunc(m.All, func(is Issue) bool { return is.ID == epic })
	if i < 0 {
		return Issue{}, nil, &Error{Kind: KindNotFound, Args: tallyArgs, Msg: fmt.Sprintf("no issue found matching %q", epic)}
	}
	return m.All[i], descendants(m.All, m.All, epic), nil
}

// Tally is Client.Tally's answer for epic.
func (m Moment) Tally(epic string) (Tally, error) {
	_, sub, err := m.Descendants(epic)
	t := Tally{Total: len(sub)}
	for _, is := range sub {
		if is.Status == StatusClosed {
			t.Closed++
		}
	}
	return t, err
}

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
