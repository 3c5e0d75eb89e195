package config

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchRepo is a fresh git repository (git init), the hook's cwd in the
// load benchmarks.
func benchRepo(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+b.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

// BenchmarkLoad is the configuration load of a stop: no project.yaml, two
// RUNTASKS_ variables, the hook's cwd a real git repository (git init).
func BenchmarkLoad(b *testing.B) {
	dir := benchRepo(b)
	environ := append(os.Environ(), "RUNTASKS_EPIC=bd-e1", "RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES=20")
	opts := LoadOptions{StartDir: dir, Environ: environ}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadCold is the first Load of a fresh process, as a stop hook
// runs it: each iteration starts the test binary anew (TestLoadColdHelper)
// and reports the median time of its one Load as cold-ns/load.
func BenchmarkLoadCold(b *testing.B) {
	dir := benchRepo(b)
	var times []time.Duration
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLoadColdHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ORCHESTRATOR_TEST_LOAD_COLD="+dir, "RUNTASKS_EPIC=bd-e1", "RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES=20")
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("helper: %v\n%s", err, out)
		}
		ns, _, _ := strings.Cut(string(out), "\n")
		d, err := time.ParseDuration(strings.TrimSpace(ns) + "ns")
		if err != nil {
			b.Fatalf("helper said %q", out)
		}
		times = append(times, d)
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "cold-ns/load")
}

// TestLoadColdHelper is BenchmarkLoadCold's process: one Load, its time in
// nanoseconds on the first line of stdout.
func TestLoadColdHelper(t *testing.T) {
	dir := os.Getenv("ORCHESTRATOR_TEST_LOAD_COLD")
	if dir == "" {
		t.Skip("run by BenchmarkLoadCold")
	}
	opts := LoadOptions{StartDir: dir, Environ: os.Environ()}
	start := time.Now()
	_, _, err := Load(opts)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(elapsed.Nanoseconds())
}
