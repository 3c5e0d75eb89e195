package headless

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/state"
)

// book is what the workers of a run share about merges and worktrees.
type book struct {
	mu       sync.Mutex
	failures map[string]int    // failed merges of a conflicting branch, per task
	kept     map[string]string // task not closed → how it ended (its worktree is kept)
	// notify hears each task parked for a person (not once per run).
	notify func(engine.Input, engine.Decision)
}

func (b *book) set(id, ended string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kept[id] = ended
}

// prepare makes or reuses a task's worktree for its agent: uncommitted
// changes an earlier agent left are stashed, and the branch is brought up
// to date with the base: started over from it when it holds nothing new,
// else the base merged into it. It returns what the agent must know.
func (w *worker) prepare(ctx context.Context, id, path, branch string) (note string, err error) {
	if err := w.repo.AddWorktree(ctx, path, branch); err != nil {
		return "", err
	}
	wt := git.Repo{Dir: path}
	if stashed, err := wt.Stash(ctx, "runtasks: left uncommitted by an earlier agent on "+id); err != nil {
		return "", err
	} else if stashed {
		note = "An earlier agent left uncommitted changes in this worktree. runtasks stashed them, unverified (git stash list, git stash show -p): use them only after checking them.\n\n"
	}
	ahead, err := w.repo.Ahead(ctx, w.base, branch)
	if err != nil {
		return note, err
	}
	if ahead == 0 {
		return note, wt.Reset(ctx, w.base)
	}
	files, err := wt.Merge(ctx, w.base)
	if len(files) > 0 {
		note += fmt.Sprintf("Your branch holds earlier work on this task. runtasks merged %s into it, and the merge conflicts in: %s. Resolve the conflicts here first (edit the files, keeping what both sides meant; git add them; git commit --no-edit).\n\n", w.base, strings.Join(files, ", "))
	}
	return note, err
}

// closed removes the worktree and branch of a closed task once the base holds the branch.
func (w *worker) closed(ctx context.Context, id string) {
	w.book.mu.Lock()
	delete(w.book.kept, id)
	w.book.mu.Unlock()
	if ahead, err := w.repo.Ahead(ctx, w.base, "agent/"+id); err == nil && ahead == 0 {
		if err := w.repo.RemoveBranch(ctx, w.wtPath(id), "agent/"+id); err != nil {
			w.log.Warn("worktree not removed", "task", id, "err", err)
			w.book.set(id, "closed, with changes not committed")
		}
	}
}

// conflicted counts a failed merge of a task whose branch conflicts with
// the base. At run.max_merge_failures the task is blocked as needing a
// person (parked true); before, it returns the note for its release.
func (w *worker) conflicted(ctx context.Context, task beads.Issue) (note string, parked bool) {
	files, err := w.repo.Conflicts(ctx, w.base, "agent/"+task.ID)
	if err != nil || len(files) == 0 {
		return "", false
	}
	w.book.mu.Lock()
	w.book.failures[task.ID]++
	n := w.book.failures[task.ID]
	w.book.mu.Unlock()
	what := fmt.Sprintf("agent/%s conflicts with %s in %s", task.ID, w.base, strings.Join(files, ", "))
	if n < w.cfg.Run.MaxMergeFailures {
		return fmt.Sprintf(" Its merge failed (%d of %d): %s.", n, w.cfg.Run.MaxMergeFailures, what), false
	}
	why := fmt.Sprintf("%s: needs a person: %d merges failed, %s", task.ID, n, what)
	note = fmt.Sprintf("runtasks run worker %d (%s): %s. Resolve the conflict on the branch (worktree %s), merge it, and close or reopen the task.",
		w.n, w.o.Now().UTC().Format(time.RFC3339), why, claim.Rel(w.cfg.Root, w.wtPath(task.ID)))
	if _, err := w.bd.Block(ctx, task.ID, w.actor, note); err != nil {
		w.log.Warn("block", "task", task.ID, "err", err)
		return "", false
	}
	w.book.set(task.ID, "blocked: needs a person")
	w.p.Printf("%s · %s", w.p.head(), oneLine(why, 300))
	if w.book.notify != nil {
		w.book.notify(engine.Input{Agent: w.agent, Epic: w.epic, Event: "run", SessionID: w.state.EngineSession},
			engine.Decision{Outcome: state.OutcomeEscalated, Epic: w.epic, Why: why, Cycle: len(w.state.Cycles)})
	}
	return "", true
}

// summary prints the worktrees kept and returns the final line's account
// of conflicts, once every worker ended (no lock).
func (b *book) summary(out io.Writer, w *worker) string {
	for _, id := range slices.Sorted(maps.Keys(b.kept)) {
		fmt.Fprintf(out, "runtasks run: kept worktree %s of %s (%s)\n", claim.Rel(w.cfg.Root, w.wtPath(id)), id, strings.TrimPrefix(b.kept[id], "blocked: "))
	}
	var s []string
	for _, id := range slices.Sorted(maps.Keys(b.failures)) {
		s = append(s, id+" "+cmp.Or(strings.TrimPrefix(b.kept[id], "blocked: "), "resolved"))
	}
	if len(s) == 0 {
		return ""
	}
	return "; merge conflicts: " + strings.Join(s, ", ")
}

// RemoveLeftovers removes, for each agent/* branch whose task is closed
// and whose commits HEAD holds, its worktree and the branch; it says what
// it removed and what it kept.
func RemoveLeftovers(ctx context.Context, cfg *config.Config, bd Beads, out io.Writer) error {
	repo := git.Repo{Dir: cfg.Root}
	wts, err := repo.Worktrees(ctx)
	branches, err2 := repo.Branches(ctx, "agent/")
	if err = cmp.Or(err, err2); err != nil {
		return err
	}
	removed := 0
	for _, b := range branches {
		id, path := strings.TrimPrefix(b, "agent/"), ""
		if i := slices.IndexFunc(wts, func(wt git.Worktree) bool { return wt.Branch == b }); i > 0 {
			path = wts[i].Path
		}
		is, err := bd.Show(ctx, id)
		ahead, aerr := repo.Ahead(ctx, "HEAD", b)
		why := ""
		switch {
		case cmp.Or(err, aerr) != nil:
			why = cmp.Or(err, aerr).Error()
		case is.Status != beads.StatusClosed:
			why = id + " is " + is.Status
		case ahead > 0:
			why = id + " is closed, but the branch is not merged"
		default:
			if err := repo.RemoveBranch(ctx, path, b); err != nil {
				why = err.Error()
				break
			}
			removed++
			fmt.Fprintf(out, "removed %s %s\n", b, claim.Rel(cfg.Root, path))
			continue
		}
		fmt.Fprintf(out, "kept %s: %s\n", b, oneLine(why, 200))
	}
	fmt.Fprintf(out, "runtasks run --clean: %d of %d agent/* branches removed\n", removed, len(branches))
	return nil
}
