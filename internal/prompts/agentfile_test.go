package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTemplatesNotRegular: prompts.run_tasks or a claim.templates file
// pointing at a FIFO or /dev/zero is an error at once, not a hang or an
// endless read.
func TestTemplatesNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.md")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	tdir := filepath.Join(dir, "templates")
	os.MkdirAll(tdir, 0o755)
	os.Symlink("/dev/zero", filepath.Join(tdir, "RESULTS.md"))
	for _, tc := range []struct {
		name string
		load func() error
		want string
	}{
		{"prompt template FIFO", func() error { _, err := Load(fifo); return err }, "is a FIFO"},
		{"prompt template /dev/zero", func() error { _, err := Load(zero); return err }, "is a character device"},
		{"run template /dev/zero", func() error { _, err := RunTemplate(tdir, "RESULTS.md"); return err }, "is a character device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- tc.load() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want one saying %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("did not return")
			}
		})
	}
}
