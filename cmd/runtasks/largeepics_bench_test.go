package main

// Benchmark of issue 20 (`make bench BENCH=LargeEpics`): the stop hook on
// 20-, 200- and 1,000-task epics in a store of about 2,000 issues, embedded
// and on a dolt sql-server, beside bd's cheapest ready query and the slow
// one it replaces. docs/benchmarks.md holds the figures of one run.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// largeRuns is how many times each of the three commands is timed per epic
// (interleaved; medians).
const largeRuns = 7

// largeEpicSizes are the epics measured; the rest of the store is filler.
var largeEpicSizes = []int{20, 200, 1000}

// largeShape is one kind of store the benchmark measures.
type largeShape struct {
	name   string // "team" or "open"
	prefix string // the store's issue prefix (and server database)
	team   bool   // other epics in progress, closed with open tasks, deferred
}

// largeShapes: the team's store of issue 30, whose ready tasks under epics
// that are not ready take a second bd process, and the store of issue 28's
// bound, where every chain of parents runs through open epics.
var largeShapes = []largeShape{{"team", "lg", true}, {"open", "lo", false}}

// largeStoreJSONL generates the store: the three measured epics (the
// 200- and 1,000-task ones in open sub-epics of 50, the way large epics are
// cut), 25 other epics of 30 tasks, and 50 top-level tasks; in every epic
// 40 % of the tasks closed, 5 % in progress, 10 % waiting on a blocker, the
// rest open. With team set, as in a real team's store, five of the other
// epics are in progress, one was closed with --force while its tasks are
// open and one is deferred: their ready tasks hang under epics that are not
// ready. Without it every other epic is open. 2,072 issues. It returns the
// JSONL and the epics' ids.
func largeStoreJSONL(prefix string, team bool) ([]byte, []string) {
	var b bytes.Buffer
	n := 0
	line := func(id, typ, status, parent string, blocks ...string) {
		n++
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format(time.RFC3339)
		m := map[string]any{"id": id, "title": "Generated " + id, "description": "A generated issue of the large-epic bench.",
			"status": status, "priority": n % 4, "issue_type": typ, "created_at": ts, "updated_at": ts}
		if status == "closed" {
			m["closed_at"] = ts
		}
		var deps []any
		if parent != "" {
			deps = append(deps, map[string]any{"issue_id": id, "depends_on_id": parent, "type": "parent-child"})
		}
		for _, bl := range blocks {
			deps = append(deps, map[string]any{"issue_id": id, "depends_on_id": bl, "type": "blocks"})
		}
		if deps != nil {
			m["dependencies"] = deps
		}
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	tasks := func(parent string, count int) {
		var prev string
		for k := 1; k <= count; k++ {
			id := fmt.Sprintf("%s.%d", parent, k)
			switch {
			case k%10 < 4:
				line(id, "task", "closed", parent)
			case k%20 == 4:
				line(id, "task", "in_progress", parent)
			case k%10 == 5 && prev != "":
				line(id, "task", "open", parent, prev) // waits on the open task before it
			default:
				line(id, "task", "open", parent)
				prev = id
			}
		}
	}
	var epics []string
	for _, size := range largeEpicSizes {
		e := fmt.Sprintf("%s-e%d", prefix, size)
		epics = append(epics, e)
		line(e, "epic", "open", "")
		if size < 200 {
			tasks(e, size)
			continue
		}
		for s := 1; s <= size/50; s++ {
			sub := fmt.Sprintf("%s.s%d", e, s)
			line(sub, "epic", "open", e)
			tasks(sub, 50)
		}
	}
	for k := 1; k <= 25; k++ {
		e := fmt.Sprintf("%s-o%d", prefix, k)
		status := "open"
		switch {
		case !team:
		case k%5 == 3: // 3, 8, 13, 18, 23
			status = "in_progress"
		case k == 10:
			status = "closed"
		case k == 20:
			status = "deferred"
		}
		line(e, "epic", status, "")
		tasks(e, 30)
	}
	for k := 1; k <= 50; k++ {
		line(fmt.Sprintf("%s-t%d", prefix, k), "task", []string{"open", "closed"}[k%2], "")
	}
	return b.Bytes(), epics
}

// largeStoreVersion names the generated store: a change to
// largeStoreJSONL takes a new one, so a cached store of the old shape is
// not measured.
const largeStoreVersion = "2"

// largeEmbeddedStore returns the embedded store of a shape, built once (bd
// import, then bd gc) and cached under
// .tools/bench/store-large-epics-<version> for the team's store,
// store-large-epics-open-<version> for the other (or under
// $RUNTASKS_BENCH_DIR).
func largeEmbeddedStore(b *testing.B, shape largeShape) (root string, env []string, epics []string) {
	b.Helper()
	bd := beadstest.RealBD(b)
	base := os.Getenv("RUNTASKS_BENCH_DIR")
	if base == "" {
		base = filepath.Join("..", "..", ".tools", "bench")
	}
	name := "store-large-epics-" + largeStoreVersion
	if !shape.team {
		name = "store-large-epics-" + shape.name + "-" + largeStoreVersion
	}
	cache, err := filepath.Abs(filepath.Join(base, name))
	if err != nil {
		b.Fatal(err)
	}
	root, home := filepath.Join(cache, "repo"), filepath.Join(cache, "home")
	env = append(os.Environ(), "HOME="+home, "BD_DISABLE_METRICS=1", "BD_NON_INTERACTIVE=1", "NO_COLOR=1", "BEADS_ACTOR=bench")
	jsonl, epics := largeStoreJSONL(shape.prefix, shape.team)
	if done, err := os.ReadFile(filepath.Join(cache, "done")); err == nil && string(done) == "v"+largeStoreVersion+"\n" {
		return root, env, epics
	}
	os.RemoveAll(cache)
	for _, d := range []string{root, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = root, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	start := time.Now()
	run("git", "init", "-q")
	run(bd, "init", "--prefix", shape.prefix, "--non-interactive", "--stealth", "--skip-agents", "--skip-hooks", "-q")
	file := filepath.Join(cache, "store.jsonl")
	if err := os.WriteFile(file, jsonl, 0o644); err != nil {
		b.Fatal(err)
	}
	run(bd, "import", file)
	// bd gc shrinks the journal the import left; every later call
	// re-opens it (docs/scale.md).
	run(bd, "gc", "--skip-decay", "--force")
	if err := os.WriteFile(filepath.Join(cache, "done"), []byte("v"+largeStoreVersion+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("embedded store built in %s", time.Since(start).Round(time.Second))
	return root, env, epics
}

// BenchmarkLargeEpics: the stop hook's wall time (the built binary, a
// session that is blocked because ready work remains) on 20-, 200- and
// 1,000-task epics in a store of about 2,000 issues, embedded and in server
// mode, beside `bd ready --json --limit 0` (every ready issue of the store:
// bd's cheapest ready query) and `bd ready --json --parent E --limit 0`
// (what the hook asked before). Goal: hook ÷ ready-limit-0 ≤ 1.2 at every
// size. Twice per case, untimed, the hook runs a bd that logs its arguments
// before it execs the real one: the first stop remembers which issues it
// had to read by id, the second reads them beside bd ready (the steady
// state, which the timed stops share). bd-procs/stop is how many bd
// processes that second stop took; list-ids-ms its reads by id run alone,
// together-ms bd ready --limit 0 and the first of them started at once.
func BenchmarkLargeEpics(b *testing.B) {
	bin := benchBinary(b)
	bd := beadstest.RealBD(b)
	callLog := filepath.Join(b.TempDir(), "calls.log")
	counting := filepath.Join(b.TempDir(), "bd")
	script := "#!/bin/sh\necho \"$*\" >> '" + callLog + "'\nexec '" + bd + "' \"$@\"\n"
	if err := os.WriteFile(counting, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	type mode struct {
		name  string
		root  string
		env   []string
		epics []string
	}
	var modes []mode
	for _, shape := range largeShapes {
		root, env, epics := largeEmbeddedStore(b, shape)
		modes = append(modes, mode{"embedded/" + shape.name, root, env, epics})
	}

	srv := beadstest.StartDoltServer(b)
	for _, shape := range largeShapes {
		s := beadstest.NewServerStore(b, shape.prefix, srv)
		jsonl, epics := largeStoreJSONL(shape.prefix, shape.team)
		file := filepath.Join(b.TempDir(), "store.jsonl")
		if err := os.WriteFile(file, jsonl, 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		// On a loaded machine the server can drop a connection mid-import
		// (i/o timeout); bd's import resumes where it stopped when run again.
		imported := false
		for try := 0; try < 3 && !imported; try++ {
			cmd := exec.Command(s.Bin, "import", file)
			cmd.Dir, cmd.Env = s.Root, s.Env
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Logf("bd import refused: %v: %s", err, strings.TrimSpace(string(out)))
			}
			imported = err == nil
		}
		if !imported {
			b.Fatal("bd import into the server store failed three times")
		}
		b.Logf("server store %s imported in %s", shape.name, time.Since(start).Round(time.Second))
		modes = append(modes, mode{"server/" + shape.name, s.Root, s.Env, epics})
	}

	for _, m := range modes {
		for k, epic := range m.epics {
			b.Run(fmt.Sprintf("%s/tasks=%d", m.name, largeEpicSizes[k]), func(b *testing.B) {
				env := append(slices.Clone(m.env), "RUNTASKS_STATE_DIR="+b.TempDir(),
					"RUNTASKS_WORKFLOW__NO_PROGRESS_CYCLES=0", "XDG_CONFIG_HOME="+b.TempDir(), "CLAUDE_PROJECT_DIR=")
				stop := func(session string) []byte {
					in, _ := json.Marshal(map[string]any{"session_id": session, "cwd": m.root,
						"hook_event_name": "Stop", "last_assistant_message": "Progress made."})
					return in
				}
				// Two stops through a bd that logs its arguments: the first
				// remembers (in the case's state directory) which issues it
				// read by id, the second reads them beside bd ready, as
				// every later stop does: the steady state timed below.
				var calls []byte
				for k, session := range []string{"bench-first", "bench-count"} {
					os.Remove(callLog)
					runTimed(b, m.root, append(slices.Clone(env), "RUNTASKS_BD="+counting), stop(session), bin, "stop-hook", "--epic", epic)
					var err error
					if calls, err = os.ReadFile(callLog); err != nil {
						b.Fatal(err)
					}
					b.Logf("%s %s: stop %d ran bd %d times:\n%s", m.name, epic, k+1, bytes.Count(calls, []byte("\n")), calls)
				}
				// The reads by id (bd list --id of issues that are not ready),
				// timed on their own, and beside bd ready as the stop runs them.
				var reads [][]string
				for _, l := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
					if strings.HasPrefix(l, "list ") {
						reads = append(reads, strings.Fields(l))
					}
				}
				ready := []string{"ready", "--json", "--limit", "0"}
				for i := 0; i < b.N; i++ {
					var all, parent, hook, extra, pair []time.Duration
					for r := range largeRuns {
						w, out := runTimed(b, m.root, env, nil, bd, ready...)
						all = append(all, w)
						w, pout := runTimed(b, m.root, env, nil, bd, "ready", "--json", "--parent", epic, "--limit", "0")
						parent = append(parent, w)
						if r == 0 {
							b.Logf("%s %s: bd ready --limit 0 lists %d KB, --parent %d KB", m.name, epic, len(out)/1024, len(pout)/1024)
						}
						w, hout := runTimed(b, m.root, env, stop(fmt.Sprintf("bench-%d-%d", i, r)), bin, "stop-hook", "--epic", epic)
						if !bytes.Contains(hout, []byte(`"decision":"block"`)) || !strings.Contains(string(hout), " ready") {
							b.Fatalf("stop-hook did not block with ready work: %s", hout)
						}
						hook = append(hook, w)
						if len(reads) > 0 {
							var sum time.Duration
							for _, args := range reads {
								w, _ := runTimed(b, m.root, env, nil, bd, args...)
								sum += w
							}
							extra = append(extra, sum)
							pair = append(pair, runTogether(b, m.root, env, bd, ready, reads[0]))
						}
					}
					b.ReportMetric(ms(median(all)), "ready-all-ms")
					b.ReportMetric(ms(median(parent)), "ready-parent-ms")
					b.ReportMetric(ms(median(hook)), "hook-ms")
					b.ReportMetric(float64(median(hook))/float64(median(all)), "hook/ready-all")
					b.ReportMetric(float64(median(hook))/float64(median(parent)), "hook/ready-parent")
					b.ReportMetric(float64(bytes.Count(calls, []byte("\n"))), "bd-procs/stop")
					if len(reads) > 0 {
						b.ReportMetric(ms(median(extra)), "list-ids-ms")
						b.ReportMetric(ms(median(pair)), "together-ms")
					}
				}
			})
		}
	}
}

// runTogether starts two bd processes at once and returns the wall time
// until both have exited.
func runTogether(b *testing.B, dir string, env []string, bin string, one, two []string) time.Duration {
	b.Helper()
	var cmds []*exec.Cmd
	for _, args := range [][]string{one, two} {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		cmds = append(cmds, cmd)
	}
	start := time.Now()
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			b.Fatalf("bd %s: %v", strings.Join(cmd.Args[1:], " "), err)
		}
	}
	return time.Since(start)
}
