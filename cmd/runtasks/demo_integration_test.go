package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// TestIntegrationDemo runs make demo's script (scripts/demo.sh) with a
// freshly built runtasks and the real bd, from a caller whose environment
// carries runtasks settings of its own (an epic, a config directory): the
// demo trusts its throwaway project and shows the three decisions the
// README promises, and nothing of the caller's settings applies.
func TestIntegrationDemo(t *testing.T) {
	t.Parallel()
	bd := beadstest.RealBD(t)
	bin := filepath.Join(t.TempDir(), "runtasks")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "RUNTASKS="+bin, "PATH="+filepath.Dir(bd)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RUNTASKS_EPIC=not-the-demo", "RUNTASKS_MAX_CYCLES=1", "XDG_CONFIG_HOME="+t.TempDir(), "CLAUDE_PROJECT_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		"trusted ",
		"→ continue: work remains: 2 ready  [cycle 1/10]",
		"→ rejected: completion rejected: 2 remain  [cycle 2/10]",
		`→ complete: promise "ALL TASKS COMPLETE" confirmed by beads  [cycle 2/10]`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the demo did not print %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "not trusted") {
		t.Errorf("the demo's project.yaml was not trusted:\n%s", out)
	}
}
