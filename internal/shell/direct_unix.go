//go:build unix

package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// RunDirect runs cmd as Run of a command made with NewContextGroup does,
// for a cmd whose standard streams are files or nil (the null device):
// in a process group of its own, stopped with first when ctx is done and
// killed after grace, and whatever it left in its group killed once it
// exited. It starts the program with one fork and exec and waits for it
// in the calling goroutine, without os/exec's machinery: no goroutine
// copies output or watches ctx until it is done, and no test child is
// forked first to probe for pidfds, which together cost a stop hook, that
// starts one program, a fifth of a millisecond (docs/benchmarks.md).
//
// cmd is read, not run: its Path (or Err, from exec.Command's lookup),
// Args, Dir, environment (Environ) and streams. A program that exits
// non-zero or is killed is an *ExitError; one that cannot be started is
// the error of the start, as os/exec reports it (errors.Is(err,
// os.ErrNotExist) for a missing program).
func RunDirect(ctx context.Context, cmd *exec.Cmd, first Signal, grace time.Duration) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	var files []uintptr
	var null *os.File
	for _, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		switch f := s.(type) {
		case nil:
			if null == nil {
				var err error
				if null, err = os.Open(os.DevNull); err != nil {
					return err
				}
				defer null.Close()
			}
			files = append(files, null.Fd())
		case *os.File:
			files = append(files, f.Fd())
		default:
			return fmt.Errorf("shell: RunDirect: a standard stream of %s is a %T, not a file", cmd.Path, s)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	waitGate()
	sys := &syscall.SysProcAttr{Setpgid: true}
	if cmd.SysProcAttr != nil {
		copied := *cmd.SysProcAttr
		sys = &copied
		sys.Setpgid = true
	}
	pid, err := syscall.ForkExec(cmd.Path, cmd.Args, &syscall.ProcAttr{Dir: cmd.Dir, Env: cmd.Environ(), Files: files, Sys: sys})
	runtime.KeepAlive(cmd.Stdin)
	runtime.KeepAlive(cmd.Stdout)
	runtime.KeepAlive(cmd.Stderr)
	if err != nil {
		return &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: err}
	}
	g := &Group{pid: pid, grace: grace}
	stopped := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(stopped)
		g.Stop(first)
	})
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if !stop() {
		<-stopped // the stop began: its SIGKILL timer is set before Reap stops it
	}
	g.Reap()
	if err != nil {
		return os.NewSyscallError("wait4", err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return &ExitError{Status: ws}
	}
	return nil
}

// ExitError is a program RunDirect ran that exited non-zero or was
// killed by a signal.
type ExitError struct {
	Status syscall.WaitStatus
}

// ExitCode is the program's exit status, -1 when a signal ended it (as
// os.ProcessState.ExitCode).
func (e *ExitError) ExitCode() int {
	if !e.Status.Exited() {
		return -1
	}
	return e.Status.ExitStatus()
}

func (e *ExitError) Error() string {
	if e.Status.Signaled() {
		return "signal: " + e.Status.Signal().String()
	}
	return fmt.Sprintf("exit status %d", e.Status.ExitStatus())
}
