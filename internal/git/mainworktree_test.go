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

// The files answer as git does, without a git process, in the layouts
// users have: a repository and its subdirectories, linked worktrees inside
// and outside it (and reached through a symlink), a submodule, a
// directory in no repository; and step aside for git wherever git might
// answer otherwise: inside .git, a bare repository and its worktree, an
// empty .git directory, core.worktree, GIT_DIR.
func TestIntegrationMainWorktreeFromFilesAgreesWithGit(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(tmp, "repo")
	mk := func(d string) string {
		t.Helper()
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	mk(filepath.Join(repo, "src", "deep"))
	gitCmd(t, repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("/build/\n*.log\n"), 0o644)
	gitCmd(t, repo, "add", ".gitignore")
	gitCmd(t, repo, "commit", "-q", "-m", "init")
	gitCmd(t, repo, "worktree", "add", "-q", ".worktrees/agent-x")
	gitCmd(t, repo, "worktree", "add", "-q", filepath.Join(tmp, "outside-wt"))
	mk(filepath.Join(repo, ".worktrees", "agent-x", "pkg"))
	mk(filepath.Join(repo, "build"))
	if err := os.Symlink(filepath.Join(repo, ".worktrees", "agent-x"), filepath.Join(tmp, "link-wt")); err != nil {
		t.Fatal(err)
	}
	sub := mk(filepath.Join(tmp, "sub"))
	gitCmd(t, sub, "init", "-q")
	gitCmd(t, sub, "commit", "-q", "--allow-empty", "-m", "init")
	gitCmd(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "vendor/sub")
	bare := filepath.Join(tmp, "bare.git")
	gitCmd(t, tmp, "clone", "-q", "--bare", repo, bare)
	gitCmd(t, bare, "worktree", "add", "-q", filepath.Join(tmp, "bare-wt"))
	empty := mk(filepath.Join(tmp, "empty", ".git"))
	moved := mk(filepath.Join(tmp, "moved"))
	gitCmd(t, moved, "init", "-q")
	gitCmd(t, moved, "config", "core.worktree", filepath.Join(tmp, "plain"))
	plain := mk(filepath.Join(tmp, "plain"))
	// core.bare set on the section header's line, which git reads too.
	oneLine := mk(filepath.Join(tmp, "oneline"))
	gitCmd(t, oneLine, "init", "-q")
	cfgPath := filepath.Join(oneLine, ".git", "config")
	cfgData, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, append(cfgData, []byte("[core] bare = true\n")...), 0o644)
	// A .git directory holding a commondir (shared with another
	// repository's): git's answer is that repository.
	shared := mk(filepath.Join(tmp, "shared"))
	gitCmd(t, shared, "init", "-q")
	os.WriteFile(filepath.Join(shared, ".git", "commondir"), []byte(filepath.Join(repo, ".git")+"\n"), 0o644)

	for _, tt := range []struct {
		dir   string
		known bool // answered from the files
	}{
		{repo, true},
		{filepath.Join(repo, "src", "deep"), true},
		{filepath.Join(repo, "build"), true},
		{filepath.Join(repo, ".worktrees", "agent-x"), true},
		{filepath.Join(repo, ".worktrees", "agent-x", "pkg"), true},
		{filepath.Join(tmp, "outside-wt"), true},
		{filepath.Join(tmp, "link-wt"), true},
		{filepath.Join(repo, "vendor", "sub"), true},
		{plain, true},
		{filepath.Join(repo, ".git"), false},
		{filepath.Join(repo, ".git", "refs"), false},
		{bare, false},
		{filepath.Join(tmp, "bare-wt"), false},
		{filepath.Dir(empty), false},
		{moved, false},
		{oneLine, false},
		{shared, false},
	} {
		wantRoot, wantOK, err := mainWorktreeByGit(context.Background(), tt.dir)
		if err != nil {
			t.Fatalf("git for %s: %v", tt.dir, err)
		}
		root, ok, known := mainWorktreeFromFiles(tt.dir)
		if known != tt.known {
			t.Errorf("%s: answered from the files %v, want %v", tt.dir, known, tt.known)
		}
		if known && (root != wantRoot || ok != wantOK) {
			t.Errorf("%s: the files say %q, %v; git says %q, %v", tt.dir, root, ok, wantRoot, wantOK)
		}
		if root, ok, err := MainWorktree(context.Background(), tt.dir); err != nil || root != wantRoot || ok != wantOK {
			t.Errorf("MainWorktree(%s) = %q, %v, %v; git says %q, %v", tt.dir, root, ok, err, wantRoot, wantOK)
		}
	}
	// A work tree owned by another user: git refuses it (safe.directory);
	// the files step aside. (Needs root to give the directory away.)
	other := mk(filepath.Join(tmp, "other"))
	gitCmd(t, other, "init", "-q")
	if err := os.Chown(other, 1234, 1234); err == nil {
		if _, _, known := mainWorktreeFromFiles(other); known {
			t.Error("a work tree owned by another user: only git can say")
		}
	} else {
		t.Logf("not root, the ownership case is not tried: %v", err)
	}
	t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
	if _, _, known := mainWorktreeFromFiles(plain); known {
		t.Error("with GIT_DIR set, only git can say")
	}
}
