// Package git asks git about a project's work tree; no other package runs git.
package git

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
)

// Repo is a git work tree.
type Repo struct {
	Dir string
}

// run runs git in the work tree, within 10 seconds.
func (r Repo) run(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Dir
	// git and what it starts (hooks, fsmonitor) run in their own process
	// group, so nothing of it outlives the timeout.
	g := shell.NewContextGroup(cmd, shell.Terminate, time.Second)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	g.Reap()
	if err != nil {
		msg := cmp.Or(strings.TrimSpace(stderr.String()), err.Error())
		return out, &runError{msg: fmt.Sprintf("git %s: %s", strings.Join(args, " "), msg), err: err}
	}
	return out, nil
}

// runError is a failed git: its message, and the error underneath (errors.As).
type runError struct {
	msg string
	err error
}

func (e *runError) Error() string { return e.msg }
func (e *runError) Unwrap() error { return e.err }

// Uncommitted lists the changed and untracked paths (not ignored ones).
func (r Repo) Uncommitted(ctx context.Context) ([]string, error) { return r.status(ctx, "normal") }

// Changed lists the tracked paths with changes, staged or not.
func (r Repo) Changed(ctx context.Context) ([]string, error) { return r.status(ctx, "no") }

func (r Repo) status(ctx context.Context, untracked string) ([]string, error) {
	out, err := r.run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files="+untracked)
	if err != nil {
		return nil, err
	}
	var paths []string
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 4 {
			continue
		}
		paths = append(paths, rec[3:])
		if rec[0] == 'R' || rec[0] == 'C' {
			i++ // the source path of a rename or copy follows
		}
	}
	return paths, nil
}

// Tracked lists the files under path that git tracks.
func (r Repo) Tracked(ctx context.Context, path string) ([]string, error) {
	out, err := r.run(ctx, "ls-files", "-z", "--", path)
	if err != nil {
		return nil, err
	}
	return strings.FieldsFunc(string(out), func(r rune) bool { return r == 0 }), nil
}

// Ignored reports whether git ignores path (which need not exist).
func (r Repo) Ignored(ctx context.Context, path string) (bool, error) {
	// check-ignore exits 1 for a path that is not ignored.
	_, err := r.run(ctx, "check-ignore", "-q", "--", path)
	return yesNo(err)
}

// yesNo reads a git that answers no with exit status 1.
func yesNo(err error) (bool, error) {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() == 1 {
		return false, nil
	}
	return err == nil, err
}

// MainWorktree is the main work tree of the repository that holds dir: for
// a linked worktree the one it was added from, else dir's own top level (a
// submodule's, a bare repository's worktree's). ok is false outside any
// work tree. A stop hook asks at every stop, so git runs only where the
// files do not answer plainly.
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
	return mainOf(filepath.Clean(lines[0]), filepath.Clean(lines[1])), true, nil
}

// mainOf is the main work tree for a git common directory and a work
// tree's top level: the directory holding common when common is a .git
// directory, else top (a submodule's, a bare repository's worktree's).
func mainOf(common, top string) string {
	if main := filepath.Dir(common); filepath.Base(common) == ".git" {
		if fi, err := os.Stat(main); err == nil && fi.IsDir() {
			return main
		}
	}
	return top
}
