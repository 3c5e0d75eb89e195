package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMain gives every git of the tests (gitCmd's and Repo's) a clean
// environment: none of the user's config, global excludes or identity, and
// no GIT_DIR (a git hook's) that would aim them at the user's repository.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") || k == "XDG_CONFIG_HOME" {
			os.Unsetenv(k)
		}
	}
	home, _ := os.MkdirTemp("", "git-test-home")
	os.Setenv("HOME", home)
	for _, kv := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"} {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

func gitCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestIntegrationUncommitted(t *testing.T) {
	dir := t.TempDir()
	gitCmd(t, dir, "init", "-q")
	ctx := context.Background()
	r := Repo{Dir: dir}

	got, err := r.Uncommitted(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty repo: %v, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ignored"), []byte("x"), 0o644)
	got, err = r.Uncommitted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".gitignore", "a.txt"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("untracked: got %q, want %q", got, want)
	}
	gitCmd(t, dir, "add", ".")
	gitCmd(t, dir, "commit", "-qm", "init")
	if got, err = r.Uncommitted(ctx); err != nil || len(got) != 0 {
		t.Fatalf("after commit: %v, %v", got, err)
	}
	gitCmd(t, dir, "mv", "a.txt", "b.txt")
	if got, err = r.Uncommitted(ctx); err != nil || !reflect.DeepEqual(got, []string{"b.txt"}) {
		t.Fatalf("after rename: %q, %v", got, err)
	}
}

func TestUncommittedNotARepo(t *testing.T) {
	if _, err := (Repo{Dir: t.TempDir()}).Uncommitted(context.Background()); err == nil {
		t.Fatal("want an error outside a git work tree")
	}
}
