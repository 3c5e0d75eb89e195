package git

import (
	"context"
	"errors"
	"os/exec"
	"strings"
)

// Tracked lists the files under path (a file or a directory, relative to
// the work tree or absolute) that git tracks.
func (r Repo) Tracked(ctx context.Context, path string) ([]string, error) {
	out, err := r.run(ctx, "ls-files", "-z", "--", path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// Ignored reports whether git ignores path (which need not exist), by the
// repository's .gitignore files, info/exclude and the user's excludes file.
func (r Repo) Ignored(ctx context.Context, path string) (bool, error) {
	_, err := r.run(ctx, "check-ignore", "-q", "--", path)
	if err == nil {
		return true, nil
	}
	// check-ignore exits 1 for a path that is not ignored.
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}
