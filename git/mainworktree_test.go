package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// MainWorktree: a linked worktree (git worktree add) answers the work tree
// it was added from; a subdirectory its repository's top; a submodule its
// own; outside any repository, or inside .git, nothing.
func TestIntegrationMainWorktree(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(tmp, "repo")
	for _, d := range []string{filepath.Join(repo, "src", "deep"), filepath.Join(tmp, "plain")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitCmd(t, repo, "init", "-q")
	gitCmd(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	gitCmd(t, repo, "worktree", "add", "-q", ".worktrees/agent-x")
	gitCmd(t, repo, "worktree", "add", "-q", filepath.Join(tmp, "outside-wt"))
	if err := os.MkdirAll(filepath.Join(repo, ".worktrees", "agent-x", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(tmp, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, sub, "init", "-q")
	gitCmd(t, sub, "commit", "-q", "--allow-empty", "-m", "init")
	gitCmd(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "vendor/sub")

	tests := []struct {
		dir, want string
		ok        bool
	}{
		{repo, repo, true},
		{filepath.Join(repo, "src", "deep"), repo, true},
		{filepath.Join(repo, ".worktrees", "agent-x"), repo, true},
		{filepath.Join(repo, ".worktrees", "agent-x", "pkg"), repo, true},
		{filepath.Join(tmp, "outside-wt"), repo, true},
		{filepath.Join(repo, "vendor", "sub"), filepath.Join(repo, "vendor", "sub"), true},
		{filepath.Join(tmp, "plain"), "", false},
		{filepath.Join(repo, ".git"), "", false},
	}
	for _, tt := range tests {
		got, ok, err := MainWorktree(context.Background(), tt.dir)
		if err != nil || ok != tt.ok || got != tt.want {
			t.Errorf("MainWorktree(%s) = %q, %v, %v; want %q, %v", tt.dir, got, ok, err, tt.want, tt.ok)
		}
	}
}
