//go:build unix

package shell_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
	"github.com/runtasks/runtasks/internal/shell/shelltest"
)

// hanging starts a child that ignores nothing and a grandchild that keeps
// the output pipe open, and writes the shell's pid (= its process group)
// to pidfile.
func hanging(pidfile string) string {
	return "echo $$ > " + pidfile + "; sleep 600 & sleep 600"
}

// A hanging command whose grandchild holds the output: a timeout or a
// cancel stops the whole group within the grace and a second; a cancel is
// ErrInterrupted (the check could not run), a timeout is TimedOut.
func TestRunStopsTheGroup(t *testing.T) {
	const grace = shell.DefaultGrace
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		cancel  time.Duration
		trap    bool // the shell ignores SIGTERM: SIGKILL after the grace
	}{
		{name: "timeout", timeout: 300 * time.Millisecond},
		{name: "interrupt", cancel: 300 * time.Millisecond},
		{name: "interrupt, SIGTERM ignored", cancel: 300 * time.Millisecond, trap: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "pid")
			cmd := hanging(pidfile)
			if tt.trap {
				cmd = "trap '' TERM; " + cmd
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			start := time.Now()
			res, err := shell.Runner{}.Run(ctx, dir, cmd, tt.timeout)
			el := time.Since(start)
			limit := max(tt.timeout, tt.cancel) + grace + time.Second
			if el > limit {
				t.Errorf("Run returned after %s, want within %s", el, limit)
			}
			if tt.timeout > 0 && (err != nil || !res.TimedOut) {
				t.Errorf("timeout: %+v, %v", res, err)
			}
			if tt.cancel > 0 && !errors.Is(err, shell.ErrInterrupted) {
				t.Errorf("interrupt: err = %v, want ErrInterrupted", err)
			}
			shelltest.GroupGone(t, shelltest.ReadPID(t, pidfile))
		})
	}
}

// A command that exits leaving a background child: the child is killed
// when Run returns.
func TestRunReapsLeftovers(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	res, err := shell.Runner{}.Run(context.Background(), dir,
		"echo $$ > "+pidfile+"; sleep 600 >/dev/null 2>&1 & echo started", time.Minute)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	shelltest.GroupGone(t, shelltest.ReadPID(t, pidfile))
}
