package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestExcludeLocally(t *testing.T) {
	for _, tt := range []struct {
		name, before, want string
	}{
		{"no exclude file", "", "# runtasks run's worktrees\n/.worktrees/\n"},
		{"other patterns, no final newline", "*.log", "*.log\n# runtasks run's worktrees\n/.worktrees/\n"},
		{"already there", "# mine\n/.worktrees/\n", "# mine\n/.worktrees/\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			path := filepath.Join(dir, ".git", "info", "exclude")
			os.Remove(path)
			if tt.before != "" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.WriteFile(path, []byte(tt.before), 0o644)
			}
			r := Repo{Dir: dir}
			for range 2 { // twice: the second adds nothing
				if err := r.ExcludeLocally(context.Background(), "/.worktrees/"); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("exclude = %q, want %q", got, tt.want)
			}
			os.MkdirAll(filepath.Join(dir, ".worktrees", "agent-x"), 0o755)
			os.WriteFile(filepath.Join(dir, ".worktrees", "agent-x", "f"), nil, 0o644)
			out, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
			if strings.Contains(string(out), "worktrees") {
				t.Errorf("git status shows the worktrees: %s", out)
			}
		})
	}
}
