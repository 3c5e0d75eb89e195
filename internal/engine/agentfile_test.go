package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
)

// agentFiles makes, in dir, the files an agent can put where runtasks
// reads: a FIFO without a writer and a symlink to /dev/zero.
func agentFiles(t *testing.T, dir string) (fifo, zero string) {
	t.Helper()
	fifo, zero = filepath.Join(dir, "fifo"), filepath.Join(dir, "zero")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	return fifo, zero
}

func returnsWithin(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

// TestFilesCheckTargetsNotRegular: a `files` check pointed at a FIFO or
// /dev/zero reports it, at once, instead of hanging or filling memory.
func TestFilesCheckTargetsNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := agentFiles(t, dir)
	for _, tc := range []struct {
		name string
		c    config.CheckSpec
		want string
	}{
		{"FIFO target", config.CheckSpec{Type: "files", Paths: []string{fifo}}, "is a FIFO, not a regular file"},
		{"/dev/zero target", config.CheckSpec{Type: "files", Paths: []string{zero}}, "is a character device, not a regular file"},
		{"FIFO template", config.CheckSpec{Type: "files", Paths: []string{"x"}, Template: fifo}, "template unreadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v Verdict
			returnsWithin(t, "the files check", func() { v = (&decider{ctx: context.Background(), cfg: &config.Config{Root: dir}}).check(tc.c) })
			all := v.Summary + " " + strings.Join(v.Feedback, " ")
			if v.Status == VerdictComplete || !strings.Contains(all, tc.want) {
				t.Errorf("verdict %s: %s; want it to say %q", v.Status, all, tc.want)
			}
		})
	}
}
