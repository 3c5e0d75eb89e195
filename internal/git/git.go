// Package git asks git about a project's work tree. It is the only package
// in runtasks that runs git.
package git

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
)

// Repo is a git work tree.
type Repo struct {
	Dir     string
	Timeout time.Duration // 0 = 10s
}

func (r Repo) run(ctx context.Context, args ...string) ([]byte, error) {
	t := r.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Dir
	// git and what it starts (hooks, credential helpers, fsmonitor) run
	// in their own process group: at the timeout the group gets SIGTERM,
	// then SIGKILL, and nothing of it outlives the call.
	g := shell.NewContextGroup(cmd, shell.Terminate, time.Second)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	g.Reap()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, &runError{msg: fmt.Sprintf("git %s: %s", strings.Join(args, " "), msg), err: err}
	}
	return out, nil
}

// runError is a failed git: its message, and the *exec.ExitError (or
// other error) underneath for errors.As.
type runError struct {
	msg string
	err error
}

func (e *runError) Error() string { return e.msg }
func (e *runError) Unwrap() error { return e.err }

// Uncommitted lists the paths git reports as changed or untracked (ignored
// files excluded); empty when the work tree is clean.
func (r Repo) Uncommitted(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
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
