package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
)

// TestIntegrationRuns: doctor says whether git tracks the runs
// folder, ignores it, or shows it, in a plain repository with its own
// .gitignore.
func TestIntegrationRuns(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string, git func(...string))
		level string
		msg   string
	}{
		{"not created", func(*testing.T, string, func(...string)) {}, OK, "runs not created yet"},
		{"created by runtasks", func(t *testing.T, root string, _ func(...string)) {
			if err := state.MkdirIgnored(filepath.Join(root, "runs")); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(root, "runs", "run-1"), 0o755)
			os.WriteFile(filepath.Join(root, "runs", "run-1", "RESULTS.md"), []byte("r"), 0o644)
		}, OK, "runs is ignored by git"},
		{"made by hand", func(t *testing.T, root string, _ func(...string)) {
			os.MkdirAll(filepath.Join(root, "runs", "run-1"), 0o755)
			os.WriteFile(filepath.Join(root, "runs", "run-1", "RESULTS.md"), []byte("r"), 0o644)
		}, Warning, "runs shows in git status"},
		{"committed", func(t *testing.T, root string, git func(...string)) {
			os.MkdirAll(filepath.Join(root, "runs", "run-1"), 0o755)
			os.WriteFile(filepath.Join(root, "runs", "run-1", "RESULTS.md"), []byte("r"), 0o644)
			git("add", "runs")
			git("commit", "-qm", "runs")
		}, Warning, "runs: 1 file(s) tracked by git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			git := func(args ...string) {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t",
					"GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			git("init", "-q")
			os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n"), 0o644)
			tt.setup(t, root, git)
			cfg := &config.Config{Root: root}
			cfg.Claim.RunsDir = "runs"
			c := checkRuns(context.Background(), cfg)
			if c.Level != tt.level || !strings.HasPrefix(c.Msg, tt.msg) {
				t.Errorf("checkRuns = %+v; want %s %q…", c, tt.level, tt.msg)
			}
		})
	}
}
