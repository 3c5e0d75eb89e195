package main

// Benchmarks of issue 18 (`make bench BENCH=Scale`): many workers on one
// machine, bd's store embedded or on a dolt sql-server. One run
// (-benchtime 1x); figures through b.ReportMetric; docs/scale.md holds
// those of one run.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// scaleConcurrency are the worker counts measured.
var scaleConcurrency = []int{1, 2, 4, 8}

// scaleEpic fills a store with an epic of n tasks and returns its id.
func scaleEpic(b *testing.B, s *beadstest.Store, n int) string {
	b.Helper()
	epic := s.Create("Scale epic", "--type", "epic")
	for k := range n {
		s.Create(fmt.Sprintf("Task %d", k+1), "--parent", epic)
	}
	return epic
}

// concurrently runs f k times at once, reps rounds, and returns the median
// time of one call and the median makespan of a round.
func concurrently(k, reps int, f func() error) (call, makespan time.Duration, err error) {
	var calls, spans []time.Duration
	for range reps {
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		for range k {
			wg.Go(func() {
				t0 := time.Now()
				e := f()
				mu.Lock()
				calls = append(calls, time.Since(t0))
				if e != nil && err == nil {
					err = e
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		spans = append(spans, time.Since(start))
	}
	return median(calls), median(spans), err
}

// BenchmarkScaleReady: `bd ready --parent E` (30-task epic) with 1, 2, 4
// and 8 at once, embedded and on a local dolt sql-server: the median time
// of one call and of the whole round (ms).
func BenchmarkScaleReady(b *testing.B) {
	srv := beadstest.StartDoltServer(b)
	stores := map[string]*beadstest.Store{
		"embedded": beadstest.NewStore(b, "sce"),
		"server":   beadstest.NewServerStore(b, "scs", srv),
	}
	for _, mode := range []string{"embedded", "server"} {
		s := stores[mode]
		epic := scaleEpic(b, s, 30)
		c := &beads.Client{WorkDir: s.Root, Env: s.Env, Timeout: 5 * time.Minute}
		for _, k := range scaleConcurrency {
			b.Run(fmt.Sprintf("%s/K=%d", mode, k), func(b *testing.B) {
				for b.Loop() {
					call, span, err := concurrently(k, 3, func() error { _, err := c.Ready(context.Background(), epic); return err })
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(ms(call), "ms/ready")
					b.ReportMetric(ms(span), "ms/round")
				}
			})
		}
	}
}

// BenchmarkScaleStopHook: `runtasks stop-hook` (the built binary) on a
// server-mode store, 1, 2, 4 and 8 at once, over one `bd ready --parent`
// alone at the same concurrency.
func BenchmarkScaleStopHook(b *testing.B) {
	bin := benchBinary(b)
	srv := beadstest.StartDoltServer(b)
	s := beadstest.NewServerStore(b, "sch", srv)
	epic := scaleEpic(b, s, 30)
	c := &beads.Client{WorkDir: s.Root, Env: s.Env, Timeout: 5 * time.Minute}
	for _, k := range scaleConcurrency {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			for b.Loop() {
				ready, _, err := concurrently(k, 3, func() error { _, err := c.Ready(context.Background(), epic); return err })
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				var mu sync.Mutex
				hook, _, err := concurrently(k, 3, func() error {
					mu.Lock()
					n++
					sess := fmt.Sprintf("bench-%d", n)
					mu.Unlock()
					in, _ := json.Marshal(map[string]any{"session_id": sess, "cwd": s.Root, "hook_event_name": "Stop", "last_assistant_message": "Working."})
					cmd := exec.Command(bin, "stop-hook", "--epic", epic)
					cmd.Dir, cmd.Env, cmd.Stdin = s.Root, s.Env, bytes.NewReader(in)
					out, err := cmd.Output()
					if err != nil || !strings.Contains(string(out), `"decision":"block"`) {
						return fmt.Errorf("stop-hook: %v: %s", err, out)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(ms(ready), "ms/ready")
				b.ReportMetric(ms(hook), "ms/stop-hook")
				b.ReportMetric(float64(hook)/float64(ready), "hook/ready")
			}
		})
	}
}

// BenchmarkScaleWorkers: `runtasks run --workers N` on a server-mode store
// with the fake worker agent taking a fixed 2 s per task: tasks closed per
// minute for N = 1, 2, 4, 8, the speed-up over one worker, and runtasks'
// bd calls per worker cycle (counted by bdwrap; the agents' own calls,
// the lease renewals and each worker's first read left out).
// RUNTASKS_BENCH_TASKS sets the epic's size (16).
func BenchmarkScaleWorkers(b *testing.B) {
	bin := benchBinary(b)
	fake, err := exec.LookPath("fakeagent")
	if err != nil {
		b.Fatalf("fakeagent (the test binary) not on PATH: %v", err)
	}
	wrap, err := exec.LookPath("bdwrap")
	if err != nil {
		b.Fatalf("bdwrap (the test binary) not on PATH: %v", err)
	}
	tasks := 16
	if n, err := strconv.Atoi(os.Getenv("RUNTASKS_BENCH_TASKS")); err == nil && n > 0 {
		tasks = n
	}
	srv := beadstest.StartDoltServer(b)
	s := beadstest.NewServerStore(b, "scw", srv)
	for _, args := range [][]string{{"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = s.Root, s.Env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git: %v\n%s", err, out)
		}
	}
	os.WriteFile(filepath.Join(s.Root, "project.yaml"), []byte("run:\n  claude_bin: "+fake+"\nbeads:\n  bin: "+wrap+"\n  timeout: 60s\n"), 0o644)
	var one float64
	for _, n := range scaleConcurrency {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for b.Loop() {
				epic := scaleEpic(b, s, tasks)
				trace := filepath.Join(b.TempDir(), "trace")
				calls := trace + ".bd"
				env := append(slices.Clone(s.Env), "FAKEAGENT_MODE=task", "FAKEAGENT_TRACE="+trace, "FAKEAGENT_SLEEP=2s", "BDWRAP_LOG="+calls)
				cmd := exec.Command(bin, "run", "--epic", epic, "--workers", fmt.Sprint(n), "--max-cycles", "100", "--plain",
					"--run-id", fmt.Sprintf("bench-%s", epic))
				cmd.Dir, cmd.Env = s.Root, env
				start := time.Now()
				out, err := cmd.CombinedOutput()
				wall := time.Since(start)
				if err != nil {
					b.Fatalf("runtasks run --workers %d: %v\n%s", n, err, out)
				}
				perMin := float64(tasks) / wall.Minutes()
				if n == 1 {
					one = perMin
				}
				data, _ := os.ReadFile(calls)
				runs, _ := os.ReadFile(trace)
				bd := len(strings.Fields(string(data))) - strings.Count(string(data), "heartbeat") - 2*n
				b.ReportMetric(float64(bd)/float64(strings.Count(string(runs), "start ")), "bd/cycle")
				b.ReportMetric(perMin, "tasks/min")
				b.ReportMetric(wall.Seconds(), "s/epic")
				if one > 0 {
					b.ReportMetric(perMin/one, "speedup")
				}
			}
		})
	}
}
