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
	var t Tally
	for _, is := range sub {
		t.Total++
		if is.Status == StatusClosed {
			t.Closed++
		}
	}
	return t, err
}

// Block takes an issue the actor holds out of the work: blocked,
// unassigned, with note appended (why a person is needed).
func (c *Client) Block(ctx context.Context, id, actor, note string) (Issue, error) {
	return c.one(ctx, id, actor, "update", id, "--status", StatusBlocked, "--assignee", "", "--append-notes", note, "--json")
}
