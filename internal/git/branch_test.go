package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIntegrationBranches drives the pieces runtasks run --workers uses on
// a real repository: a branch behind a moved base conflicts; merging the
// base into it leaves the conflict in its worktree; uncommitted changes
// are stashed, not committed; a merged branch and its worktree go.
func TestIntegrationBranches(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a.txt"), "base\n")
	gitCmd(t, dir, "init", "-q", "-b", "main")
	gitCmd(t, dir, "add", "a.txt")
	gitCmd(t, dir, "commit", "-qm", "init")
	repo, wtDir := Repo{Dir: dir}, filepath.Join(dir, ".worktrees", "x")
	if err := repo.AddWorktree(ctx, wtDir, "agent/x"); err != nil {
		t.Fatal(err)
	}
	wt := Repo{Dir: wtDir}
	if n, err := repo.Ahead(ctx, "main", "agent/x"); n != 0 || err != nil {
		t.Fatalf("Ahead = %d, %v; want 0", n, err)
	}
	write(filepath.Join(wtDir, "a.txt"), "branch\n")
	gitCmd(t, wtDir, "commit", "-qam", "branch")
	write(filepath.Join(dir, "a.txt"), "moved\n")
	if got, err := repo.Changed(ctx); !slices.Equal(got, []string{"a.txt"}) || err != nil {
		t.Fatalf("Changed = %v, %v", got, err)
	}
	gitCmd(t, dir, "commit", "-qam", "base moves")
	if got, err := repo.Changed(ctx); len(got) != 0 || err != nil {
		t.Fatalf("Changed after commit = %v, %v", got, err)
	}
	if n, _ := repo.Ahead(ctx, "main", "agent/x"); n != 1 {
		t.Fatalf("Ahead = %d, want 1", n)
	}
	if got, err := repo.Conflicts(ctx, "main", "agent/x"); !slices.Equal(got, []string{"a.txt"}) || err != nil {
		t.Fatalf("Conflicts = %v, %v", got, err)
	}
	if got, err := wt.Merge(ctx, "main"); !slices.Equal(got, []string{"a.txt"}) || err != nil {
		t.Fatalf("Merge = %v, %v", got, err)
	}
	// An unfinished merge and an uncommitted file: both put aside.
	write(filepath.Join(wtDir, "new.txt"), "left\n")
	if ok, err := wt.Stash(ctx, "left"); !ok || err != nil {
		t.Fatalf("Stash = %v, %v", ok, err)
	}
	if left, _ := wt.Uncommitted(ctx); len(left) != 0 {
		t.Fatalf("after Stash: %v uncommitted", left)
	}
	if ok, err := wt.Stash(ctx, "none"); ok || err != nil {
		t.Fatalf("Stash of a clean tree = %v, %v", ok, err)
	}
	if n, _ := repo.Ahead(ctx, "main", "agent/x"); n != 1 {
		t.Fatalf("Ahead before the reset = %d, want 1", n)
	}
	if err := wt.Reset(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if n, err := repo.Ahead(ctx, "main", "agent/x"); n != 0 || err != nil {
		t.Fatalf("Ahead after the reset = %d, %v", n, err)
	}
	if got, _ := repo.Branches(ctx, "agent/"); !slices.Equal(got, []string{"agent/x"}) {
		t.Fatalf("Branches = %v", got)
	}
	// A worktree on another branch is someone else's: never taken over.
	if err := repo.AddWorktree(ctx, wtDir, "agent/y"); err == nil || !strings.Contains(err.Error(), "is on agent/x, not agent/y") {
		t.Fatalf("AddWorktree on another branch's worktree = %v", err)
	}
	// A worktree holding changes not committed is kept.
	write(filepath.Join(wtDir, "wip.txt"), "not committed\n")
	if err := repo.RemoveBranch(ctx, wtDir, "agent/x"); err == nil {
		t.Fatal("RemoveBranch removed a worktree with changes not committed")
	}
	if _, err := os.Stat(filepath.Join(wtDir, "wip.txt")); err != nil {
		t.Fatalf("the uncommitted file is gone: %v", err)
	}
	os.Remove(filepath.Join(wtDir, "wip.txt"))
	if err := repo.RemoveBranch(ctx, wtDir, "agent/x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := repo.Branches(ctx, "agent/"); len(got) != 0 {
		t.Fatalf("Branches after removal = %v", got)
	}
	if _, err := os.Stat(wtDir); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}
}
