package git

import (
	"context"
	"strconv"
	"strings"
)

// Ahead counts the commits of branch that base lacks.
func (r Repo) Ahead(ctx context.Context, base, branch string) (int, error) {
	out, err := r.run(ctx, "rev-list", "--count", base+".."+branch)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// Conflicts lists the files a merge of branch into base would leave in
// conflict, touching no work tree.
func (r Repo) Conflicts(ctx context.Context, base, branch string) ([]string, error) {
	out, err := r.run(ctx, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", base, branch)
	if clean, err := yesNo(err); clean || err != nil {
		return nil, err
	}
	// The tree's id, then the conflicted files.
	files := strings.FieldsFunc(string(out), func(r rune) bool { return r == 0 })
	return files[min(1, len(files)):], nil
}

// Stash puts a work tree's uncommitted changes, untracked files included,
// aside under msg (after ending a merge left unfinished); false: none.
func (r Repo) Stash(ctx context.Context, msg string) (bool, error) {
	_, _ = r.run(ctx, "merge", "--abort")
	if paths, err := r.Uncommitted(ctx); err != nil || len(paths) == 0 {
		return false, err
	}
	_, err := r.run(ctx, "stash", "push", "--include-untracked", "-m", msg)
	return err == nil, err
}

// Merge merges rev into the work tree's branch. A conflict is left in the
// work tree, its files returned.
func (r Repo) Merge(ctx context.Context, rev string) ([]string, error) {
	_, err := r.run(ctx, "merge", "--no-edit", rev)
	if err == nil {
		return nil, nil
	}
	out, derr := r.run(ctx, "diff", "--name-only", "--diff-filter=U", "-z")
	if files := strings.FieldsFunc(string(out), func(r rune) bool { return r == 0 }); derr == nil && len(files) > 0 {
		return files, nil
	}
	return nil, err
}

// Reset moves the work tree and its branch to rev, discarding changes.
func (r Repo) Reset(ctx context.Context, rev string) error {
	_, err := r.run(ctx, "reset", "-q", "--hard", rev)
	return err
}

// RemoveBranch removes the worktree at path ("" for none) unless it holds
// changes not committed (git refuses), then branch unless it holds commits
// HEAD lacks.
func (r Repo) RemoveBranch(ctx context.Context, path, branch string) error {
	if path != "" {
		worktrees.Lock()
		_, err := r.run(ctx, "worktree", "remove", "--", path)
		worktrees.Unlock()
		if err != nil {
			return err
		}
	}
	_, err := r.run(ctx, "branch", "-d", "--", branch)
	return err
}

// Branches lists the local branches under prefix ("agent/").
func (r Repo) Branches(ctx context.Context, prefix string) ([]string, error) {
	out, err := r.run(ctx, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+prefix)
	return strings.Fields(string(out)), err
}
