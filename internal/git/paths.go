package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tracked lists the files under path (a file or a directory, relative to
// the work tree or absolute) that git tracks.
func (r Repo) Tracked(ctx context.Context, path string) ([]string, error) {
	out, err := r.run(ctx, "ls-files", "-z", "--", path)
	if err != nil {
		return nil, err
	}
	return strings.FieldsFunc(string(out), func(r rune) bool { return r == 0 }), nil
}

// Ignored reports whether git ignores path (which need not exist), by the
// repository's .gitignore files, info/exclude and the user's excludes file.
func (r Repo) Ignored(ctx context.Context, path string) (bool, error) {
	_, err := r.run(ctx, "check-ignore", "-q", "--", path)
	if err == nil {
		return true, nil
	}
	// check-ignore exits 1 for a path that is not ignored.
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}

// MainWorktree is the main work tree of the repository that holds dir:
// for a linked worktree (git worktree add) the work tree it was added
// from, else dir's own top level. ok is false when dir is in no work tree
// (outside any repository, or inside a .git directory). It runs one git
// process only where the repository's files do not answer plainly
// (mainWorktreeFromFiles): a stop hook asks at every stop.
//
// A submodule is its own repository (its top level is its root); a linked
// worktree of a bare repository, which has no main work tree, is its own.
func MainWorktree(ctx context.Context, dir string) (root string, ok bool, err error) {
	if root, ok, known := mainWorktreeFromFiles(dir); known {
		return root, ok, nil
	}
	return mainWorktreeByGit(ctx, dir)
}

// mainWorktreeByGit is MainWorktree as git answers it.
func mainWorktreeByGit(ctx context.Context, dir string) (root string, ok bool, err error) {
	out, err := Repo{Dir: dir}.run(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel")
	if err != nil {
		if _, ok := errors.AsType[*exec.ExitError](err); ok || errors.Is(err, exec.ErrNotFound) {
			return "", false, nil // not a repository or not a work tree (exit 128), or no git
		}
		return "", false, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 || lines[1] == "" {
		return "", false, nil
	}
	common, top := filepath.Clean(lines[0]), filepath.Clean(lines[1])
	if filepath.Base(common) == ".git" {
		main := filepath.Dir(common)
		if fi, err := os.Stat(main); err == nil && fi.IsDir() {
			return main, true, nil
		}
	}
	return top, true, nil
}
