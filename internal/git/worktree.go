package git

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// worktrees serialises this process's worktree commands: git does not
// lock .git/worktrees, and one worker's add, list or prune read or removed
// another's entry half made ("fatal: failed to read .git/worktrees/…").
var worktrees sync.Mutex

// Worktree is one entry of `git worktree list --porcelain`.
type Worktree struct {
	Path     string // absolute, as git prints it
	Branch   string // without refs/heads/; "" when detached or bare
	Head     string // the commit checked out
	Prunable bool   // git knows the worktree's directory is gone
}

// Worktrees lists the repository's worktrees, the main one first.
func (r Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	worktrees.Lock()
	defer worktrees.Unlock()
	return r.listWorktrees(ctx)
}

func (r Repo) listWorktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.run(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return ParseWorktrees(out), nil
}

// ParseWorktrees decodes `git worktree list --porcelain -z` output.
func ParseWorktrees(out []byte) []Worktree {
	var list []Worktree
	for _, line := range strings.Split(string(out), "\x00") {
		key, val, _ := strings.Cut(line, " ")
		if key == "worktree" {
			list = append(list, Worktree{Path: val})
			continue
		}
		if len(list) == 0 {
			continue
		}
		switch cur := &list[len(list)-1]; key {
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "HEAD":
			cur.Head = val
		case "prunable":
			cur.Prunable = true
		}
	}
	return list
}

// AddWorktree makes path a worktree on branch, new from HEAD or existing (a
// task a dead worker had); a worktree on branch at path already is kept,
// one on another branch is an error (someone else's work).
func (r Repo) AddWorktree(ctx context.Context, path, branch string) error {
	worktrees.Lock()
	defer worktrees.Unlock()
	wts, err := r.listWorktrees(ctx)
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(wts, func(wt Worktree) bool { return wt.Path == path && !wt.Prunable }); i >= 0 {
		if wts[i].Branch != branch {
			return fmt.Errorf("the worktree %s is on %s, not %s: runtasks leaves it as it is", path, cmp.Or(wts[i].Branch, "a detached HEAD"), branch)
		}
		return nil
	}
	if _, err := r.run(ctx, "worktree", "prune"); err != nil {
		return err
	}
	if _, err := r.run(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		_, err = r.run(ctx, "worktree", "add", "--", path, branch)
		return err
	}
	_, err = r.run(ctx, "worktree", "add", "-b", branch, "--", path, "HEAD")
	return err
}

// ExcludeLocally adds pattern to this clone's info/exclude (never a tracked
// .gitignore) unless it is there: worktrees inside the project must not
// show in git status, or an agent's `git add -A` would take them in.
func (r Repo) ExcludeLocally(ctx context.Context, pattern string) error {
	out, err := r.run(ctx, "rev-parse", "--path-format=absolute", "--git-path", "info/exclude")
	if err != nil {
		return err
	}
	path := strings.TrimSpace(string(out))
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if slices.ContainsFunc(strings.Split(string(data), "\n"), func(l string) bool { return strings.TrimSpace(l) == pattern }) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	prefix := ""
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		prefix = "\n"
	}
	_, err = f.WriteString(prefix + "# runtasks run's worktrees\n" + pattern + "\n")
	return errors.Join(err, f.Close())
}
