// Package shell runs a project's shell commands (the command checker's) with
// a timeout, keeping the tail of their output, each in a process group.
package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// MaxOutput is how many bytes of a command's output are kept (the tail).
const MaxOutput = 64 << 10

// Result is how a command ended.
type Result struct {
	ExitCode int    // -1 when it was killed
	Output   []byte // the tail of its combined stdout and stderr
	TimedOut bool
	Elapsed  time.Duration
}

// Runner runs commands with `sh -c` in a directory.
type Runner struct {
	Env   []string // nil: the current one
	Stdin []byte
}

// DefaultGrace is how long a command's group has after SIGTERM before
// SIGKILL.
const DefaultGrace = 2 * time.Second

// ErrInterrupted is returned (wrapped) when ctx was cancelled while the
// command ran: it says nothing about the project, so it counts as "could
// not run", never as a failure.
var ErrInterrupted = errors.New("interrupted")

// Run runs command in dir; an error means it could not run at all. At the
// timeout, or when ctx is cancelled, its group gets SIGTERM, then SIGKILL
// after DefaultGrace; Run returns within DefaultGrace and a second, even
// when a child holds the output open, and leaves nothing of the group
// running.
func (r Runner) Run(parent context.Context, dir, command string, timeout time.Duration) (Result, error) {
	ctx := parent
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = r.Env
	if r.Stdin != nil {
		cmd.Stdin = bytes.NewReader(r.Stdin)
	}
	g := NewContextGroup(cmd, Terminate, DefaultGrace)
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	g.Reap()
	res := Result{ExitCode: cmd.ProcessState.ExitCode(), Output: out, Elapsed: time.Since(start)}
	switch {
	case parent.Err() != nil:
		return res, fmt.Errorf("%w after %s (%v)", ErrInterrupted, res.Elapsed.Round(time.Millisecond), context.Cause(parent))
	case ctx.Err() == context.DeadlineExceeded:
		res.TimedOut = true
	case cmd.ProcessState == nil:
		return res, err // it could not start
	}
	return res, nil
}

// tail is a writer that keeps the last MaxOutput bytes. Run gives it as
// both Stdout and Stderr: exec then calls Write from one goroutine at a
// time, and Wait returns after the last one.
type tail []byte

func (t *tail) Write(p []byte) (int, error) {
	*t = append(*t, p...)
	if over := len(*t) - MaxOutput; over > 0 {
		*t = append((*t)[:0], (*t)[over:]...)
	}
	return len(p), nil
}
