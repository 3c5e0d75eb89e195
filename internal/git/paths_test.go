package git

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestIntegrationTrackedAndIgnored(t *testing.T) {
	dir := t.TempDir()
	gitCmd(t, dir, "init", "-q")
	ctx := context.Background()
	r := Repo{Dir: dir}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644)
	for _, d := range []string{"runs/run-1", "scratch", "kept"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "runs", "run-1", "RESULTS.md"), []byte("r"), 0o644)
	os.WriteFile(filepath.Join(dir, "scratch", ".gitignore"), []byte("*\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "kept", "a.txt"), []byte("a"), 0o644)
	gitCmd(t, dir, "add", "runs", "kept")
	gitCmd(t, dir, "commit", "-qm", "init")

	if got, err := r.Tracked(ctx, "runs"); err != nil || !reflect.DeepEqual(got, []string{"runs/run-1/RESULTS.md"}) {
		t.Errorf("Tracked(runs) = %q, %v", got, err)
	}
	if got, err := r.Tracked(ctx, "scratch"); err != nil || len(got) != 0 {
		t.Errorf("Tracked(scratch) = %q, %v", got, err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"scratch/anything", true},       // the directory's own .gitignore "*"
		{"x.log", true},                  // the root .gitignore
		{"kept/new.txt", false},          // not ignored
		{"missing-dir/not-there", false}, // need not exist
	} {
		if got, err := r.Ignored(ctx, tc.path); err != nil || got != tc.want {
			t.Errorf("Ignored(%s) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
	if _, err := (Repo{Dir: t.TempDir()}).Ignored(ctx, "x"); err == nil {
		t.Error("Ignored outside a repository: no error")
	}
}
