package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func gitCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
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
