package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseWorktrees(t *testing.T) {
	out := "worktree /p\x00HEAD abc\x00branch refs/heads/main\x00\x00" +
		"worktree /p/.worktrees/agent-x.1\x00HEAD def\x00branch refs/heads/agent-x.1\x00locked\x00\x00" +
		"worktree /p/.worktrees/gone\x00HEAD 123\x00detached\x00prunable gitdir file points to non-existent location\x00\x00"
	want := []Worktree{
		{Path: "/p", Branch: "main", Head: "abc"},
		{Path: "/p/.worktrees/agent-x.1", Branch: "agent-x.1", Head: "def"},
		{Path: "/p/.worktrees/gone", Head: "123", Prunable: true},
	}
	if got := ParseWorktrees([]byte(out)); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// TestIntegrationWorktrees makes real worktrees with git and reads them back.
func TestIntegrationWorktrees(t *testing.T) {
	dir := t.TempDir()
	gitCmd(t, dir, "init", "-q", "-b", "main")
	gitCmd(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	gitCmd(t, dir, "worktree", "add", "-q", "-b", "agent-x.1", filepath.Join(dir, ".worktrees", "agent-x.1"))
	gitCmd(t, dir, "worktree", "add", "-q", "--detach", filepath.Join(dir, ".worktrees", "agent-x.2"))
	if err := os.RemoveAll(filepath.Join(dir, ".worktrees", "agent-x.2")); err != nil {
		t.Fatal(err)
	}
	wts, err := Repo{Dir: dir}.Worktrees(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(wts) != 3 {
		t.Fatalf("want 3 worktrees, got %+v", wts)
	}
	if wts[0].Branch != "main" || wts[1].Branch != "agent-x.1" || filepath.Base(wts[1].Path) != "agent-x.1" {
		t.Fatalf("unexpected worktrees: %+v", wts)
	}
	if wts[2].Branch != "" || !wts[2].Prunable {
		t.Fatalf("removed worktree should be detached and prunable: %+v", wts[2])
	}
	if _, err := (Repo{Dir: t.TempDir()}).Worktrees(context.Background()); err == nil {
		t.Fatal("want an error outside a repository")
	}
}

// Workers add and remove their worktrees at the same moment: one's prune
// must never take the entry another's add is making.
func TestIntegrationWorktreesAtOnce(t *testing.T) {
	dir := t.TempDir()
	gitCmd(t, dir, "init", "-q", "-b", "main")
	gitCmd(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	repo, ctx := Repo{Dir: dir}, context.Background()
	for round := range 4 {
		errs := make(chan error, 8)
		for i := range 8 {
			go func() {
				path, branch := filepath.Join(dir, ".worktrees", fmt.Sprintf("w%d-%d", round, i)), fmt.Sprintf("agent/w%d-%d", round, i)
				err := repo.AddWorktree(ctx, path, branch)
				if err == nil {
					err = repo.RemoveBranch(ctx, path, branch)
				}
				errs <- err
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
