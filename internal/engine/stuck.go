package engine

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/state"
)

// Stuck actions (workflow.stuck_action).
const (
	StuckBlock  = "block"  // status blocked, with a note
	StuckReopen = "reopen" // back to open, for another agent
	StuckReport = "report" // change nothing, say it
)

// StatusUpdater changes issues in beads; *beads.Client implements it.
type StatusUpdater interface {
	SetStatus(ctx context.Context, id, status string) (beads.Issue, error)
	AppendNotes(ctx context.Context, id, text string) (beads.Issue, error)
	// Reclaim gives back issues whose bd lease expired.
	Reclaim(ctx context.Context, ids ...string) ([]string, error)
}

// StuckTask is an in-progress task found stuck, with the action Stop applies.
type StuckTask struct {
	ID      string
	Reason  string // why it is stuck
	Action  string // block, reopen or report
	Reclaim bool   // its bd lease expired: reopened with bd reclaim (open, unassigned)
}

// LiveTask is an in-progress task someone may still be working on, and
// where: in its worktree, or held by its bd lease's holder.
type LiveTask struct{ ID, Where string }

// LeaseExpired reports whether the task's bd lease has expired at now.
func LeaseExpired(is beads.Issue, now time.Time) bool {
	return !is.LeaseExpiresAt.IsZero() && !now.Before(is.LeaseExpiresAt)
}

// WorktreePath is the task's worktree for a pattern such as ".worktrees/agent-{id}".
func WorktreePath(root, pattern, id string) string {
	p := strings.ReplaceAll(pattern, "{id}", id)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(root, p)
}

// findWorktree finds the task's worktree among wts, by path (or its tail
// relative to the root, so a symlinked root still matches) or by branch
// (the pattern's last element, e.g. agent-{id}).
func findWorktree(wts []git.Worktree, root, pattern, id string) (git.Worktree, bool) {
	want := WorktreePath(root, pattern, id)
	rel := filepath.Clean(strings.ReplaceAll(pattern, "{id}", id))
	branch := filepath.Base(rel)
	for _, wt := range wts[min(1, len(wts)):] { // the first is the main work tree
		p := filepath.Clean(wt.Path)
		if p == want || (!filepath.IsAbs(rel) && strings.HasSuffix(p, string(filepath.Separator)+rel)) ||
			(wt.Branch != "" && (wt.Branch == branch || wt.Branch == rel)) {
			return wt, true
		}
	}
	return git.Worktree{}, false
}

// ClassifyInProgress sorts in-progress tasks into live and stuck ones. A
// task this session claimed (in mine) is never stuck. One whose worktree
// exists or whose bd lease runs is live unless older than stuck_after.
// Otherwise a task is stuck when its worktree is gone (other worktrees
// exist, or it was seen), its lease expired while worktrees are in use, or
// it is older than stuck_after. wts is nil when not a git repository.
func ClassifyInProgress(inProgress []beads.Issue, wts []git.Worktree, mine []state.ClaimedRun, seen []string, cfg *config.Config, now time.Time) (live []LiveTask, stuck []StuckTask) {
	pattern, after := cfg.Workflow.Worktrees.Pattern, cfg.Workflow.StuckAfter
	inUse := len(wts) > 1
	action := cmp.Or(cfg.Workflow.StuckAction, StuckBlock)
	for _, is := range inProgress {
		if slices.ContainsFunc(mine, func(c state.ClaimedRun) bool { return c.Task == is.ID }) {
			continue
		}
		old := after > 0 && !is.StartedAt.IsZero() && now.Sub(is.StartedAt) >= after
		oldWhy := fmt.Sprintf("started %s ago (stuck_after %s)", config.FormatDuration(now.Sub(is.StartedAt).Truncate(time.Minute)), config.FormatDuration(after))
		if pattern != "" {
			if wt, ok := findWorktree(wts, cfg.Root, pattern, is.ID); ok && !wt.Prunable {
				if old {
					stuck = append(stuck, StuckTask{ID: is.ID, Reason: oldWhy, Action: action})
				} else {
					live = append(live, LiveTask{ID: is.ID, Where: "in " + wt.Path})
				}
				continue
			}
		}
		if !is.LeaseExpiresAt.IsZero() && now.Before(is.LeaseExpiresAt) && !old { // its holder renews it
			live = append(live, LiveTask{ID: is.ID, Where: fmt.Sprintf("held by %s (bd lease until %s)", is.Assignee, is.LeaseExpiresAt.UTC().Format(time.RFC3339))})
			continue
		}
		var why string
		switch {
		case (inUse || slices.Contains(seen, is.ID)) && pattern != "" && wts != nil:
			why = "worktree " + strings.ReplaceAll(pattern, "{id}", is.ID) + " is gone"
		case inUse && LeaseExpired(is, now):
			// An agent working alone on the main tree does not renew its
			// lease: it keeps its task until stuck_after. Where worktrees
			// are in use, an expired lease is a holder that stopped.
			why = "bd lease expired at " + is.LeaseExpiresAt.UTC().Format(time.RFC3339)
		case old:
			why = oldWhy
		default:
			continue
		}
		t := StuckTask{ID: is.ID, Reason: why, Action: action}
		if LeaseExpired(is, now) && action != StuckReport {
			// Its holder stopped renewing it: bd's recovery is to give it
			// back for another worker, not to block it.
			t.Action, t.Reclaim = StuckReopen, true
		}
		stuck = append(stuck, t)
	}
	return live, stuck
}

// applyStuck carries out the action the engine decided for a stuck task,
// one bd call at a time, and says what it did for the decision log. A
// failed change is said, not hidden.
func applyStuck(ctx context.Context, bd StatusUpdater, t StuckTask, now time.Time) string {
	status := map[string]string{StuckBlock: beads.StatusBlocked, StuckReopen: beads.StatusOpen}[t.Action]
	var done string
	switch {
	case status == "":
		return "reported, not changed"
	case t.Reclaim:
		// bd reclaim clears the assignee too: bd refuses another
		// actor's claim on a task still assigned.
		got, err := bd.Reclaim(ctx, t.ID)
		if err != nil {
			return "could not reclaim: " + OneLine(err.Error(), 200)
		} else if len(got) == 0 {
			return "not reclaimed (bd: its lease is live again, or the task moved)"
		}
		done = "given back with bd reclaim (open, unassigned)"
	default:
		if _, err := bd.SetStatus(ctx, t.ID, status); err != nil {
			return "could not set " + status + ": " + OneLine(err.Error(), 200)
		}
		done = "status set to " + status
	}
	note := fmt.Sprintf("Agent exited without completing (runtasks, %s): %s.", now.UTC().Format(time.RFC3339), t.Reason)
	if _, err := bd.AppendNotes(ctx, t.ID, note); err != nil {
		return done + "; note not written: " + OneLine(err.Error(), 200)
	}
	return done + ", note appended"
}

// handleStuck runs at a stop with no ready work but in-progress tasks: it
// finds stuck tasks and updates its view of the subtree as their actions
// will leave it (reopened: ready unless blocked; otherwise: waiting).
func (d *decider) handleStuck() {
	inProgress := d.restOf("in_progress")
	if d.env.Worktrees == nil || len(inProgress) == 0 || len(d.ready) > 0 {
		return
	}
	wts, err := d.env.Worktrees(d.ctx)
	if err != nil {
		wts = nil // not a git repository: judge by lease and started_at only
	}
	d.live, d.stuck = ClassifyInProgress(inProgress, wts, d.in.Claims, d.st.Worktrees, d.cfg, d.env.Now)
	if wts != nil {
		d.st.Worktrees = mapped(d.live, func(l LiveTask) string { return l.ID })
	}
	if len(d.stuck) == 0 {
		return
	}
	d.rest = slices.Clone(d.rest)
	for i, is := range d.rest {
		switch k := slices.IndexFunc(d.stuck, func(t StuckTask) bool { return t.ID == is.ID }); {
		case k < 0:
		case d.stuck[k].Action == StuckReopen:
			d.rest[i].Status = beads.StatusOpen
			if len(is.BlockedBy) == 0 {
				d.ready = append(d.ready, d.rest[i])
			}
		default:
			d.rest[i].Status = beads.StatusBlocked
		}
	}
}
