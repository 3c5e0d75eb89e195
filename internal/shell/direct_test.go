//go:build unix

package shell_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
	"github.com/runtasks/runtasks/internal/shell/shelltest"
)

// TestRunDirect: a program's output lands in its files, in its directory
// and environment; a non-zero exit is an ExitError with the code; a
// missing program is os/exec's not-found error; a stream that is not a
// file is refused before anything starts.
func TestRunDirect(t *testing.T) {
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("sh", "-c", `pwd; echo "$RUNDIRECT_X"; read line || echo "stdin: eof"; echo oops >&2; exit 3`)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "RUNDIRECT_X=x1")
	cmd.Stdout, cmd.Stderr = out, out
	err = shell.RunDirect(context.Background(), cmd, shell.Terminate, time.Second)
	var ee *shell.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || err.Error() != "exit status 3" {
		t.Errorf("err = %v, want exit status 3", err)
	}
	got, _ := os.ReadFile(out.Name())
	real, _ := filepath.EvalSymlinks(dir)
	if want := real + "\nx1\nstdin: eof\noops\n"; string(got) != want {
		t.Errorf("output %q, want %q", got, want)
	}

	if err := shell.RunDirect(context.Background(), exec.Command("true"), shell.Terminate, time.Second); err != nil {
		t.Errorf("true: %v", err)
	}
	err = shell.RunDirect(context.Background(), exec.Command("runtasks-no-such-program"), shell.Terminate, time.Second)
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing program on PATH: %v, want exec.ErrNotFound", err)
	}
	err = shell.RunDirect(context.Background(), exec.Command(filepath.Join(dir, "missing")), shell.Terminate, time.Second)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing program by path: %v, want os.ErrNotExist", err)
	}
	marker := filepath.Join(dir, "ran")
	cmd = exec.Command("touch", marker)
	cmd.Stdout = &strings.Builder{}
	if err := shell.RunDirect(context.Background(), cmd, shell.Terminate, time.Second); err == nil {
		t.Error("a stdout that is not a file was accepted")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran although its stdout was refused")
	}
}

// TestRunDirectStopsTheGroup: a cancel stops the program's whole group
// (a grandchild included), with SIGKILL after the grace when SIGTERM is
// ignored; a program that exits leaving a child in its group has it
// killed.
func TestRunDirectStopsTheGroup(t *testing.T) {
	const grace = 300 * time.Millisecond
	for _, tt := range []struct {
		name   string
		script string
		cancel bool
	}{
		{name: "cancel", script: "sleep 600 & sleep 600", cancel: true},
		{name: "cancel, SIGTERM ignored", script: "trap '' TERM; sleep 600 & sleep 600", cancel: true},
		{name: "leftover", script: "sleep 600 >/dev/null 2>&1 &"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				time.AfterFunc(200*time.Millisecond, cancel)
			}
			start := time.Now()
			err := shell.RunDirect(ctx, exec.Command("sh", "-c", "echo $$ > "+pidfile+"; "+tt.script), shell.Terminate, grace)
			if el := time.Since(start); el > 200*time.Millisecond+grace+2*time.Second {
				t.Errorf("RunDirect returned after %s", el)
			}
			var ee *shell.ExitError
			if tt.cancel && (!errors.As(err, &ee) || ee.ExitCode() != -1 || !strings.HasPrefix(err.Error(), "signal: ")) {
				t.Errorf("err = %v, want the program killed by a signal", err)
			}
			if !tt.cancel && err != nil {
				t.Errorf("err = %v", err)
			}
			shelltest.GroupGone(t, shelltest.ReadPID(t, pidfile))
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	marker := filepath.Join(t.TempDir(), "ran")
	if err := shell.RunDirect(ctx, exec.Command("touch", marker), shell.Terminate, grace); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the start: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran although the context was done")
	}
}
