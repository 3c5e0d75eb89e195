//go:build unix

package beads_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/shell/shelltest"
)

// A hanging bd (a script whose child holds the output): at the timeout or
// when ctx is cancelled, bd's whole process group is stopped and the call
// returns within the timeout, the grace and a second.
func TestClientStopsAHangingBD(t *testing.T) {
	const (
		timeout = 400 * time.Millisecond
		grace   = time.Second // bd's, after SIGTERM
	)
	for _, tt := range []struct {
		name   string
		cancel time.Duration
		trap   bool
		kind   beads.ErrorKind
	}{
		{name: "timeout", kind: beads.KindTimeout},
		{name: "timeout, SIGTERM ignored", trap: true, kind: beads.KindTimeout},
		{name: "cancelled", cancel: 200 * time.Millisecond, kind: beads.KindFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "bd.pid")
			trap := ""
			if tt.trap {
				trap = "trap '' TERM\n"
			}
			script := "#!/bin/sh\n" + trap + "echo $$ > " + pidfile + "\nsleep 600 &\nsleep 600\n"
			bin := filepath.Join(dir, "bd")
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			c := &beads.Client{Bin: bin, WorkDir: dir, Timeout: timeout}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			start := time.Now()
			_, err := c.Ready(ctx, "e-1")
			if el, limit := time.Since(start), timeout+grace+time.Second; el > limit {
				t.Errorf("Ready returned after %s, want within %s", el, limit)
			}
			if !beads.IsKind(err, tt.kind) {
				t.Errorf("err = %v, want kind %s", err, tt.kind)
			}
			shelltest.GroupGone(t, shelltest.ReadPID(t, pidfile))
		})
	}
}

// Ids are data: one that bd would read as an option is refused before bd
// runs.
func TestClientRefusesOptionLikeIDs(t *testing.T) {
	c := &beads.Client{Bin: "/nonexistent/bd"}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"show":   func() error { _, err := c.Show(ctx, "--help"); return err },
		"ready":  func() error { _, err := c.Ready(ctx, "-x"); return err },
		"update": func() error { _, err := c.SetStatus(ctx, "--all", "closed"); return err },
		"claim":  func() error { _, err := c.ClaimID(ctx, "", "me"); return err },
	} {
		if err := call(); !beads.IsKind(err, beads.KindNotFound) {
			t.Errorf("%s: err = %v, want a refused id (not found)", name, err)
		}
	}
}
