package headless

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/state"
)

// book is what the workers of a run share about merges and worktrees.
type book struct {
	mu        sync.Mutex
	failures  map[string]int    // failed merges per task
	conflicts map[string]string // task → how its conflicts ended
	kept      map[string]string // task not closed → how it ended (its worktree is kept)
}

// checkClean refuses a main work tree with changes to tracked files: the
// workers' merges into it would fail.
func checkClean(ctx context.Context, repo git.Repo) error {
	paths, err := repo.Changed(ctx)
	if err != nil {
		return err
	}
	if len(paths) > 0 {
		return fmt.Errorf("the main work tree %s has changes to tracked files, and the workers' merges into it would fail: %s; commit or stash them, or give --allow-dirty to go on", repo.Dir, strings.Join(paths, ", "))
	}
	return nil
}

// prepare readies a task's worktree for its agent: uncommitted changes an
// earlier agent left are stashed, and the branch is brought up to date
// with the base: started over from it when it holds nothing new, else the
// base merged into it. It returns what the agent must know.
func (w *worker) prepare(ctx context.Context, id, path, branch string) (string, error) {
	wt := git.Repo{Dir: path}
	var note string
	if stashed, err := wt.Stash(ctx, "runtasks: left uncommitted by an earlier agent on "+id); err != nil {
		return "", err
	} else if stashed {
		note += "An earlier agent left uncommitted changes in this worktree. runtasks stashed them, unverified (git stash list, git stash show -p): use them only after checking them.\n\n"
	}
	ahead, err := w.repo.Ahead(ctx, w.base, branch)
	if err != nil {
		return "", err
	}
	if ahead == 0 {
		return note, wt.Reset(ctx, w.base)
	}
	files, err := wt.Merge(ctx, w.base)
	if err != nil {
		return "", err
	}
	if len(files) > 0 {
		note += fmt.Sprintf("Your branch holds earlier work on this task. runtasks merged %s into it, and the merge conflicts in: %s. Resolve the conflicts here first (edit the files, keeping what both sides meant; git add them; git commit --no-edit).\n\n", w.base, strings.Join(files, ", "))
	}
	return note, nil
}

// merged removes the worktree and branch of a closed task whose branch is
// in the base.
func (w *worker) merged(ctx context.Context, id string) {
	path, branch := w.wtPath(id), "agent/"+id
	w.book.mu.Lock()
	delete(w.book.kept, id)
	if _, ok := w.book.conflicts[id]; ok {
		w.book.conflicts[id] = "resolved"
	}
	w.book.mu.Unlock()
	if ok, err := w.repo.Merged(ctx, branch, w.base); err != nil || !ok {
		return
	}
	if err := w.repo.RemoveBranch(ctx, path, branch); err != nil {
		w.log.Warn("worktree not removed", "task", id, "err", err)
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
	w.book.conflicts[task.ID] = "given back"
	w.book.mu.Unlock()
	what := fmt.Sprintf("agent/%s conflicts with %s in %s", task.ID, w.base, strings.Join(files, ", "))
	if n < w.cfg.Run.MaxMergeFailures {
		return fmt.Sprintf(" Its merge failed (%d of %d): %s.", n, w.cfg.Run.MaxMergeFailures, what), false
	}
	why := fmt.Sprintf("%s: needs a person: %d merges failed, %s", task.ID, n, what)
	note = fmt.Sprintf("runtasks run worker %d (%s): %s. Resolve the conflict on the branch (worktree %s), merge it, and close or reopen the task.",
		w.n, w.o.Now().UTC().Format(time.RFC3339), why, relTo(w.cfg.Root, w.wtPath(task.ID)))
	if _, err := w.bd.Block(ctx, task.ID, w.actor, note); err != nil {
		w.log.Warn("block", "task", task.ID, "err", err)
		return "", false
	}
	w.book.mu.Lock()
	w.book.conflicts[task.ID] = "needs a person"
	w.book.kept[task.ID] = "blocked: needs a person"
	w.book.mu.Unlock()
	w.p.Printf("%s · %s", w.p.head(), oneLine(why, 300))
	if w.ports.Notify != nil {
		w.ports.Notify(engine.Input{Agent: w.agent, Epic: w.epic, Event: "run", SessionID: w.state.EngineSession},
			engine.Decision{Outcome: state.OutcomeEscalated, Epic: w.epic, Why: why, Cycle: len(w.state.Cycles)})
	}
	return "", true
}

// summary is the final lines' account of conflicts and kept worktrees.
func (b *book) summary(out io.Writer, w *worker) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(b.kept)) {
		fmt.Fprintf(out, "runtasks run: kept worktree %s of %s (%s)\n", relTo(w.cfg.Root, w.wtPath(id)), id, strings.TrimPrefix(b.kept[id], "blocked: "))
	}
	var s []string
	for _, id := range slices.Sorted(maps.Keys(b.conflicts)) {
		s = append(s, id+" "+b.conflicts[id])
	}
	if len(s) == 0 {
		return ""
	}
	return "; merge conflicts: " + strings.Join(s, ", ")
}

// RemoveLeftovers removes the worktrees and agent/* branches that runtasks run
// --workers left for tasks that are closed, when the branch is merged
// into the main work tree's branch; it says what it removed and kept.
func RemoveLeftovers(ctx context.Context, cfg *config.Config, bd Beads, out io.Writer) error {
	repo := git.Repo{Dir: cfg.Root}
	wts, err := repo.Worktrees(ctx)
	if err != nil {
		return err
	}
	branches, err := repo.Branches(ctx, "agent/")
	if err != nil {
		return err
	}
	removed := 0
	for _, b := range branches {
		id := strings.TrimPrefix(b, "agent/")
		path := ""
		if i := slices.IndexFunc(wts, func(wt git.Worktree) bool { return wt.Branch == b }); i > 0 {
			path = wts[i].Path
		}
		is, err := bd.Show(ctx, id)
		switch {
		case err != nil:
			fmt.Fprintf(out, "kept %s: %s\n", b, oneLine(err.Error(), 200))
		case is.Status != beads.StatusClosed:
			fmt.Fprintf(out, "kept %s: %s is %s\n", b, id, is.Status)
		default:
			if ok, err := repo.Merged(ctx, b, "HEAD"); err != nil || !ok {
				fmt.Fprintf(out, "kept %s: %s is closed, but the branch is not merged\n", b, id)
				continue
			}
			if err := repo.RemoveBranch(ctx, path, b); err != nil {
				fmt.Fprintf(out, "kept %s: %s\n", b, oneLine(err.Error(), 200))
				continue
			}
			removed++
			fmt.Fprintf(out, "removed %s %s\n", b, relTo(cfg.Root, path))
		}
	}
	fmt.Fprintf(out, "runtasks run --clean: %d of %d agent/* branches removed\n", removed, len(branches))
	return nil
}
