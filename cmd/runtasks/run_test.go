package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestIntegrationRun runs the txtar scenarios in testdata/run: runtasks run
// drives a fake agent (fakeagent_test.go) against a real bd store. Each
// script starts in a git repository with a fresh `demo` store; it fails,
// never skips, when the real bd is not on PATH.
func TestIntegrationRun(t *testing.T) {
	bd, err := exec.LookPath("bd")
	if err != nil {
		t.Fatalf("the real bd is not on PATH (run `make bd`, or test with `make test`): %v", err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/run",
		UpdateScripts: *update,
		Cmds:          map[string]func(ts *testscript.TestScript, neg bool, args []string){"waitlines": waitLines},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			for _, kv := range []string{
				"HOME=" + home, "BD_DISABLE_METRICS=1", "BD_NON_INTERACTIVE=1", "NO_COLOR=1",
				"BEADS_ACTOR=tester", "GIT_AUTHOR_NAME=tester", "GIT_AUTHOR_EMAIL=t@example.com",
				"GIT_COMMITTER_NAME=tester", "GIT_COMMITTER_EMAIL=t@example.com",
			} {
				k, v, _ := strings.Cut(kv, "=")
				e.Setenv(k, v)
			}
			env := append(os.Environ(), e.Vars...)
			for _, c := range [][]string{
				{"git", "init", "-q"},
				{bd, "init", "--prefix", "demo", "--non-interactive", "--stealth", "--skip-agents", "--skip-hooks", "-q"},
			} {
				cmd := exec.Command(c[0], c[1:]...)
				cmd.Dir, cmd.Env = e.WorkDir, env
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("%s: %v\n%s", strings.Join(c, " "), err, out)
				}
			}
			return nil
		},
	})
}
