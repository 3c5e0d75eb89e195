package beads

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Reading is one read of the whole store (bd list --all) that answers, for
// one decision of runtasks run and the progress count after it, what the
// engine asks (Ready, Subtree, Show) and the epic's Tally: one bd process
// between two agent runs where the decision and the count took two.
//
// Ready is answered from the reading only where the reading holds bd's own
// answer. bd v1.3.0's rule for a ready issue (internal/storage/sqlbuild's
// ready predicate over the is_blocked projection) is: status open, not
// pinned, not of a type bd ready leaves out, no defer_until in the future
// and no parent with one, and not blocked, where an issue that is not
// closed or pinned is blocked by a blocks or conditional-blocks dependency
// on an issue that is not closed or pinned, or by a parent that is
// blocked. The reading applies it only to a store it can judge whole: the
// built-in statuses, no waits-for gate, no pinned, ephemeral or template issue, no
// link to an issue the list does not show, no deferral within a minute of
// now. Its order is bd ready's (priority, then creation, then id).
//
// Even then, only an answer that keeps the agent working is taken from it:
// "nothing ready" while the epic has unclosed work is asked of bd (bd
// ready), so no run ends on the reading's word, and a second Ready (the
// engine asks again when its two reads seem to race) goes to bd too. bd's
// answer is placed under the epic with the reading's parent links, closed
// issues' included, so asking bd costs the one bd ready.
// TestIntegrationReadingEquivalence holds it to bd on generated stores.
//
// A Reading reads lazily (at its first question) and once; it is for one
// goroutine and one decision.
type Reading struct {
	c   *Client
	now func() time.Time

	read  bool
	err   error
	all   []Issue
	flags map[string]readFlags
	exact bool
	asked map[string]bool
}

// readFlags are the fields of a listed issue that only readiness needs.
type readFlags struct {
	Pinned     bool      `json:"pinned"`
	Ephemeral  bool      `json:"ephemeral"`
	IsTemplate bool      `json:"is_template"`
	WispType   string    `json:"wisp_type"`
	DeferUntil time.Time `json:"defer_until"`
}

// Reading starts a read of the store for one decision (nothing runs until
// it is asked).
func (c *Client) Reading() *Reading { return &Reading{c: c, now: time.Now} }

// bd ready's own exclusions by type (sqlbuild.ReadyWorkExcludeTypes: merge
// requests, gates, molecules, rigs and the infrastructure types).
var notReadyTypes = []string{"merge-request", "gate", "molecule", "rig", "agent", "role", "message"}

var builtinStatuses = []string{StatusOpen, StatusInProgress, StatusBlocked, StatusDeferred, StatusClosed, StatusPinned, StatusHooked}

// Dependency types that block in bd's is_blocked projection besides blocks.
const (
	depConditionalBlocks = "conditional-blocks"
	depWaitsFor          = "waits-for"
)

// deferMargin keeps a defer_until this close to now out of the reading's
// judgement: bd compares it with the store's clock, not this one.
const deferMargin = time.Minute

func (r *Reading) load(ctx context.Context) error {
	if r.read {
		return r.err
	}
	r.read = true
	var wire []struct {
		wireIssue
		readFlags
	}
	if err := r.c.query(ctx, &wire, tallyArgs...); err != nil {
		r.err = err
		return err
	}
	r.all = make([]Issue, len(wire))
	r.flags = make(map[string]readFlags, len(wire))
	for i := range wire {
		r.all[i] = wire[i].issue()
		r.flags[wire[i].ID] = wire[i].readFlags
	}
	r.exact = r.judgeable()
	return nil
}

// judgeable reports whether readiness can be computed from the list alone.
func (r *Reading) judgeable() bool {
	now := r.now()
	for _, is := range r.all {
		f := r.flags[is.ID]
		if !slices.Contains(builtinStatuses, is.Status) || f.Pinned || f.Ephemeral || f.IsTemplate || f.WispType != "" {
			return false
		}
		if !f.DeferUntil.IsZero() && f.DeferUntil.Sub(now).Abs() < deferMargin {
			return false
		}
		for _, p := range is.parentIDs() {
			if _, ok := r.flags[p]; !ok {
				return false
			}
		}
		for _, d := range is.Dependencies {
			if d.Type == depWaitsFor {
				return false
			}
			if blocking(d.Type) {
				if _, ok := r.flags[d.DependsOnID]; !ok {
					return false
				}
			}
		}
	}
	return true
}

func blocking(typ string) bool { return typ == DepBlocks || typ == depConditionalBlocks }

// Ready lists the epic's ready descendants as bd ready --parent would: from
// the reading when it holds that answer and work is ready, else from bd.
func (r *Reading) Ready(ctx context.Context, epic string) ([]Issue, error) {
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	if r.asked == nil {
		r.asked = map[string]bool{}
	}
	again := r.asked[epic]
	r.asked[epic] = true
	if r.exact && !again {
		ready, unclosed := r.ready(epic)
		if len(ready) > 0 || unclosed == 0 {
			return ready, nil
		}
	}
	// bd says what is ready; the reading's parent links (closed issues'
	// too) place it under the epic, as Client.Ready's bd list would.
	all, err := r.c.ReadyAll(ctx)
	if err != nil {
		return nil, err
	}
	if in, unsure := Under(epic, all, r.all); len(unsure) == 0 {
		return in, nil
	}
	return r.c.ReadyParent(ctx, epic)
}

// ready computes bd's ready descendants of epic from the list, in bd
// ready's order, and counts the epic's unclosed descendants.
func (r *Reading) ready(epic string) (ready []Issue, unclosed int) {
	now := r.now()
	byID := make(map[string]*Issue, len(r.all))
	for i := range r.all {
		byID[r.all[i].ID] = &r.all[i]
	}
	blocked := map[string]bool{}
	var isBlocked func(id string, depth int) bool
	isBlocked = func(id string, depth int) bool {
		if b, ok := blocked[id]; ok {
			return b
		}
		is := byID[id]
		b := false
		if is != nil && is.Status != StatusClosed && is.Status != StatusPinned && depth < len(r.all) {
			for _, d := range is.Dependencies {
				if d.IssueID != is.ID {
					continue
				}
				if t := byID[d.DependsOnID]; blocking(d.Type) && t != nil && t.Status != StatusClosed && t.Status != StatusPinned {
					b = true
					break
				}
			}
			for _, p := range is.parentIDs() {
				if !b && isBlocked(p, depth+1) {
					b = true
				}
			}
		}
		blocked[id] = b
		return b
	}
	deferred := func(id string) bool {
		d := r.flags[id].DeferUntil
		return !d.IsZero() && d.After(now)
	}
	member := under(r.all, epic)
	for _, is := range r.all {
		if !member[is.ID] {
			continue
		}
		if is.Status != StatusClosed {
			unclosed++
		}
		if is.Status != StatusOpen || slices.Contains(notReadyTypes, is.IssueType) || deferred(is.ID) {
			continue
		}
		if slices.ContainsFunc(is.parentIDs(), deferred) || isBlocked(is.ID, 0) {
			continue
		}
		ready = append(ready, is)
	}
	slices.SortStableFunc(ready, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return ready, unclosed
}

// Subtree lists every unclosed descendant of the epic with its blockers,
// as Client.Subtree does: from the reading when it can judge the store.
func (r *Reading) Subtree(ctx context.Context, epic string) ([]Issue, error) {
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	if !r.exact {
		return r.c.Subtree(ctx, epic)
	}
	// bd list's default answer: neither closed nor pinned.
	open := slices.DeleteFunc(slices.Clone(r.all), func(is Issue) bool { return is.Status == StatusClosed || is.Status == StatusPinned })
	return descendants(open, r.all, epic), nil
}

// Show returns a listed issue as the list printed it, else bd show's answer
// (an unknown id is an error).
func (r *Reading) Show(ctx context.Context, id string) (Issue, error) {
	if err := r.load(ctx); err != nil {
		return Issue{}, err
	}
	for _, is := range r.all {
		if is.ID == id {
			return is, nil
		}
	}
	return r.c.Show(ctx, id)
}

// Tally counts the epic's descendants by whether they are closed, from the
// reading (as Client.Tally does from its own bd list --all).
func (r *Reading) Tally(ctx context.Context, epic string) (Tally, error) {
	if err := r.load(ctx); err != nil {
		return Tally{}, err
	}
	return tally(r.all, epic)
}
