package headless

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/git"
)

// A reused worktree: what an earlier agent left uncommitted is stashed and
// the prompt says so; a branch with nothing new starts over from the base;
// a branch with work gets the moved base merged in, its conflict left for
// the agent and named in the prompt.
func TestPrepareReusedWorktree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := func(in string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = in
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("base\n"), 0o644)
	run(dir, "init", "-q", "-b", "main")
	run(dir, "add", "a.txt")
	run(dir, "commit", "-qm", "init")
	w := &worker{repo: git.Repo{Dir: dir}, base: "main"}
	wt := filepath.Join(dir, ".worktrees", "x")
	if err := w.repo.AddWorktree(ctx, wt, "agent/x"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("half done\n"), 0o644)
	run(dir, "commit", "-q", "--allow-empty", "-m", "base moves")
	note, err := w.prepare(ctx, "x", wt, "agent/x")
	if err != nil || !strings.Contains(note, "runtasks stashed them, unverified") || strings.Contains(note, "conflicts") {
		t.Fatalf("prepare = %q, %v; want the stash named", note, err)
	}
	if n, _ := w.repo.Ahead(ctx, "agent/x", "main"); n != 0 {
		t.Fatal("the branch with nothing new did not start over from the moved base")
	}
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("branch\n"), 0o644)
	run(wt, "commit", "-qam", "work")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("other\n"), 0o644)
	run(dir, "commit", "-qam", "another task's merge")
	note, err = w.prepare(ctx, "x", wt, "agent/x")
	if err != nil || !strings.Contains(note, "runtasks merged main into it, and the merge conflicts in: a.txt") || strings.Contains(note, "stashed") {
		t.Fatalf("prepare = %q, %v; want the conflict named", note, err)
	}
}
