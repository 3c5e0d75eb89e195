package orchestrator

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkLoad is the configuration load of a stop: no project.yaml, two
// RUNTASKS_ variables, the hook's cwd a real git repository (git init).
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+b.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	environ := append(os.Environ(), "RUNTASKS_EPIC=bd-e1", "RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES=20")
	opts := LoadOptions{StartDir: dir, Environ: environ}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}
