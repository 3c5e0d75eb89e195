package main

// Benchmarks of issue 8 (`make bench`). Each reports its figures as ratios
// with b.ReportMetric; run once (-benchtime 1x): each benchmark repeats its
// own measurements and takes medians. Timings run the CLI as a child
// process, so wall time includes process start, and peak memory is the
// child's rusage Maxrss. The runtasks binary is built by go build, as shipped.
// docs/benchmarks.md holds the figures of one run.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
)

// benchRuns is how many times each timing is repeated (median taken).
const benchRuns = 5

// bdRuns is the repetitions of the real-bd comparison (about 3 s a pair).
const bdRuns = 9

type childRun struct {
	wall   time.Duration
	maxRSS int64 // bytes
	stdout []byte
}

// gnuTime is GNU time, which measures peak RSS right: it forks the
// command from its own small process. The rusage Go gets from wait4 is no
// good for this: Go starts children with vfork, and Linux charges the
// parent's (the benchmark's) peak RSS to the child at exec.
const gnuTime = "/usr/bin/time"

// runChild runs bin with args in dir and returns its wall time and peak
// RSS (through GNU time when present; else wait4's rusage, which is at
// least the benchmark process's own RSS: the ratios then say nothing).
func runChild(b *testing.B, dir string, env []string, stdin []byte, bin string, args ...string) childRun {
	b.Helper()
	name, argv := bin, args
	rssFile := ""
	if _, err := os.Stat(gnuTime); err == nil {
		rssFile = filepath.Join(b.TempDir(), "rss")
		name, argv = gnuTime, append([]string{"-f", "%M", "-o", rssFile, bin}, args...)
	}
	cmd := exec.Command(name, argv...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	kb := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if rssFile != "" {
		data, err := os.ReadFile(rssFile)
		fields := strings.Fields(string(data))
		if err != nil || len(fields) == 0 {
			b.Fatalf("GNU time wrote no RSS: %v %q", err, data)
		}
		if kb, err = strconv.ParseInt(fields[len(fields)-1], 10, 64); err != nil {
			b.Fatalf("GNU time RSS %q: %v", data, err)
		}
	} else {
		b.Logf("no %s: peak RSS from wait4 includes the benchmark's own", gnuTime)
	}
	return childRun{wall: wall, maxRSS: kb * 1024, stdout: stdout.Bytes()}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianInt(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchBinary builds runtasks as shipped (go build, once per test
// process) so that timings include the real binary's start, not the test
// binary's: what runtasks install writes into the agents' settings, so
// what runs at every stop.
func benchBinary(b *testing.B) string {
	b.Helper()
	benchBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "runtasks-bench-")
		if err != nil {
			benchBinErr = err
			return
		}
		benchBin = filepath.Join(dir, "runtasks")
		cmd := exec.Command("go", "build", "-o", benchBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as shipped (make build)
		if out, err := cmd.CombinedOutput(); err != nil {
			benchBinErr = fmt.Errorf("go build runtasks: %v\n%s", err, out)
		}
	})
	if benchBinErr != nil {
		b.Fatal(benchBinErr)
	}
	return benchBin
}

var (
	benchBinOnce sync.Once
	benchBin     string
	benchBinErr  error
)

// bench1000Store returns a real-bd store holding an epic with 1,000 open
// tasks, built once (bd import: about half a minute) and cached under
// .tools/bench/store-1000 (git-ignored) for later runs.
func bench1000Store(b *testing.B) (root, epic string, env []string) {
	b.Helper()
	bd := beadstest.RealBD(b)
	cache, err := filepath.Abs(filepath.Join("..", "..", ".tools", "bench", "store-1000"))
	if err != nil {
		b.Fatal(err)
	}
	root, home := filepath.Join(cache, "repo"), filepath.Join(cache, "home")
	env = append(os.Environ(), "HOME="+home, "BD_DISABLE_METRICS=1", "BD_NON_INTERACTIVE=1", "NO_COLOR=1", "BEADS_ACTOR=bench")
	if e, err := os.ReadFile(filepath.Join(cache, "epic")); err == nil {
		return root, strings.TrimSpace(string(e)), env
	}
	os.RemoveAll(cache)
	for _, d := range []string{root, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	run := func(name string, args ...string) []byte {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return out
	}
	run("git", "init", "-q")
	run(bd, "init", "--prefix", "bn", "--non-interactive", "--stealth", "--skip-agents", "--skip-hooks", "-q")
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(run(bd, "create", "Bench epic", "--type", "epic", "--json"), &created); err != nil || created.ID == "" {
		b.Fatalf("bd create epic: %v", err)
	}
	epic = created.ID
	var jl bytes.Buffer
	for i := 1; i <= 1000; i++ {
		id := fmt.Sprintf("%s.%d", epic, i)
		line, _ := json.Marshal(map[string]any{
			"id": id, "title": fmt.Sprintf("Task %d of the bench epic", i), "status": "open",
			"priority": i % 4, "issue_type": "task",
			"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
			"dependencies": []any{map[string]any{"issue_id": id, "depends_on_id": epic, "type": "parent-child"}},
		})
		jl.Write(line)
		jl.WriteByte('\n')
	}
	jsonl := filepath.Join(cache, "tasks.jsonl")
	if err := os.WriteFile(jsonl, jl.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	run(bd, "import", jsonl)
	if err := os.WriteFile(filepath.Join(cache, "epic"), []byte(epic+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return root, epic, env
}

// BenchmarkStopHookOverBDReady: the stop hook's wall time over one
// `bd ready --json --parent E --limit 0` on a real 1,000-issue store. Ready
// work remains and no promise is claimed, so one bd query decides. Goal:
// at most 1.15.
func BenchmarkStopHookOverBDReady(b *testing.B) {
	root, epic, env := bench1000Store(b)
	bd := beadstest.RealBD(b)
	bin := benchBinary(b)
	stateDir := b.TempDir()
	env = append(env, "RUNTASKS_STATE_DIR="+stateDir)
	for i := 0; i < b.N; i++ {
		var tBD, tHook []time.Duration
		for r := 0; r < bdRuns; r++ {
			c := runChild(b, root, env, nil, bd, "ready", "--json", "--parent", epic, "--limit", "0")
			if !bytes.Contains(c.stdout, []byte(epic+".1000")) {
				b.Fatalf("bd ready does not list the 1,000 tasks")
			}
			tBD = append(tBD, c.wall)
			in, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("bench-%d-%d", i, r), "cwd": root,
				"hook_event_name": "Stop", "last_assistant_message": "Progress made."})
			h := runChild(b, root, env, in, bin, "stop-hook", "--epic", epic)
			if !bytes.Contains(h.stdout, []byte(`"decision":"block"`)) {
				b.Fatalf("stop-hook did not block: %s", h.stdout)
			}
			tHook = append(tHook, h.wall)
		}
		b.ReportMetric(ms(median(tBD)), "bd-ready-ms")
		b.ReportMetric(ms(median(tHook)), "stop-hook-ms")
		b.ReportMetric(float64(median(tHook))/float64(median(tBD)), "hook/bd-ready")
	}
}

// instantBD is a shell-script bd answering `ready` at once with two tasks.
func instantBD(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "bd")
	script := "#!/bin/sh\ncase \"$1\" in ready) echo '" + readyJSON + "';; *) echo '[]';; esac\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchTranscript makes a Claude Code transcript of size bytes: a sparse
// head (a hole: instant to make, and read like any data if runtasks read
// it) and a realistic 1 MB tail of user, tool and assistant lines ending
// with the assistant's final message.
func benchTranscript(b *testing.B, dir string, size int64) string {
	b.Helper()
	var tail bytes.Buffer
	for i := 0; tail.Len() < 1<<20; i++ {
		fmt.Fprintf(&tail, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q,"is_error":false}]},"uuid":"u%d"}`+"\n", i, strings.Repeat("output line\n", 40), i)
		fmt.Fprintf(&tail, `{"type":"assistant","message":{"id":"m%d","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"Step %d done; continuing with the next task."},{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"bd ready --json"}}],"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":9000,"output_tokens":80}},"uuid":"a%d"}`+"\n", i, i, i+1, i)
	}
	tail.WriteString(`{"type":"assistant","message":{"id":"mz","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"I made progress on the epic."}],"usage":{"input_tokens":5,"cache_read_input_tokens":9000,"output_tokens":12}},"uuid":"az"}` + "\n")
	p := filepath.Join(dir, fmt.Sprintf("t-%d.jsonl", size))
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	head := size - int64(tail.Len()) - 1
	if head < 0 {
		head = 0
	}
	if err := f.Truncate(head); err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteAt(append([]byte{'\n'}, tail.Bytes()...), head); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchTurn appends to the transcript at path what the agent writes between
// two stops of a loop: the last stop's reason fed back ("Stop hook
// feedback"), a tool call and its result, and the final message, each
// assistant line with its usage (Claude Code 2.1's shape). The stop after it
// reads that turn's tokens: token accounting at work, as in a loop.
func benchTurn(b *testing.B, path string, n int) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, `{"type":"user","message":{"role":"user","content":"Stop hook feedback:\nYou are the orchestrator for beads epic %[2]s. Work until beads shows it done."},"uuid":"f%[1]d"}`+"\n", n, faultEpic)
	fmt.Fprintf(f, `{"type":"assistant","message":{"id":"r%[1]d","model":"claude-opus-5-5","role":"assistant","content":[{"type":"tool_use","id":"x%[1]d","name":"Bash","input":{"command":"bd ready --json"}}],"usage":{"input_tokens":20,"cache_creation_input_tokens":500,"cache_read_input_tokens":12000,"output_tokens":40}},"uuid":"b%[1]d"}`+"\n", n)
	fmt.Fprintf(f, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x%[1]d","content":%[2]q,"is_error":false}]},"uuid":"c%[1]d"}`+"\n", n, strings.Repeat("output line\n", 40))
	fmt.Fprintf(f, `{"type":"assistant","message":{"id":"s%[1]d","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"I made progress on the epic."}],"usage":{"input_tokens":8,"cache_read_input_tokens":12500,"output_tokens":15}},"uuid":"d%[1]d"}`+"\n", n)
}

// benchTurnTokens are the tokens of one benchTurn.
const benchTurnTokens = (20 + 500 + 12000 + 40) + (8 + 12500 + 15)

// benchSpent is what the state of session in the project at root says the
// session spent, in tokens.
func benchSpent(b *testing.B, root, session string) int64 {
	b.Helper()
	files, _ := filepath.Glob(filepath.Join(root, config.DefaultStateDir, "sessions", "*.json"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		var st state.State
		if json.Unmarshal(data, &st) == nil && st.Session == session {
			return st.Spent.Total()
		}
	}
	b.Fatalf("no state of session %s", session)
	return 0
}

// ownRuns is how many paired runs measure runtasks' own cost per case.
const ownRuns = 41

// cpuTime is the CPU time (user + system) of the last runTimed child and
// the children it waited for: on a loaded machine it moves less than the
// wall time, which includes waiting for a core.
var cpuTime time.Duration

// runTimed runs bin directly (no GNU time in between, which would add its
// own start to the wall time) and returns its wall time and stdout; its
// CPU time is left in cpuTime.
func runTimed(b *testing.B, dir string, env []string, stdin []byte, bin string, args ...string) (time.Duration, []byte) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpuTime = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return wall, stdout.Bytes()
}

// benchProgram builds a static Go program of testdata/bench (the floor,
// the instant bd) into dir.
func benchProgram(b *testing.B, dir, name string) string {
	b.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, "./testdata/bench/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", name, err, msg)
	}
	return out
}

// BenchmarkStopHookTranscriptSize: runtasks' own cost at a stop (issue
// 17), with an instant fake bd, on 1 MB and 1 GB transcripts, with and
// without last_assistant_message. Each of ownRuns rounds runs, for each
// transcript size in turn (the sizes alternate), the instant bd alone, the floor program (testdata/bench/floor: read
// stdin and the transcript's last 64 KB, answer) and the stop hook of
// runtasks (what install writes), each timed directly; runtasks' own cost
// is the hook's wall time less the bd run's of the same round, and its
// median is compared with the floor's.
// CPU times (user + system, from wait4) are reported beside: they move
// less with the machine's load. Peak RSS comes from separate runs under
// GNU time. Goals: own ≤ 5 ms,
// own ÷ floor ≤ 2, RSS ≤ 20 MB, 1 GB ÷ 1 MB ≤ 1.2 (time and RSS).
func BenchmarkStopHookTranscriptSize(b *testing.B) {
	bin := benchBinary(b)
	tools := b.TempDir()
	floor := benchProgram(b, tools, "floor")
	bd := instantBD(b)
	env := append(os.Environ(), "RUNTASKS_BD="+bd, "BD_DISABLE_METRICS=1", "HOME="+b.TempDir())
	root := gitRepo(b, filepath.Join(b.TempDir(), "proj"))
	os.Mkdir(filepath.Join(root, ".beads"), 0o755) // a beads project (bd is a fake)
	env = append(env, "RUNTASKS_WORKFLOW__NO_PROGRESS_CYCLES=0", "RUNTASKS_MAX_CYCLES=100000", "XDG_CONFIG_HOME="+b.TempDir(), "CLAUDE_PROJECT_DIR=")
	// As a user sets it up: runtasks install writes the hooks, the
	// project.yaml with every key, and trusts it; the hooks read it (the
	// limits above come from the environment, over the file).
	install := exec.Command(bin, "install", "claude", "--epic", faultEpic)
	install.Dir, install.Env = root, env
	if out, err := install.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("trusted")) {
		b.Fatalf("runtasks install claude: %v\n%s", err, out)
	}
	settings, _ := os.ReadFile(filepath.Join(root, ".claude", "settings.json"))
	if !bytes.Contains(settings, []byte(`"runtasks stop-hook`)) {
		b.Fatalf("install did not write runtasks' hooks:\n%s", settings)
	}
	dir := b.TempDir()
	sizes := []struct {
		name string
		n    int64
	}{{"1MB", 1 << 20}, {"1GB", 1 << 30}}
	for i := 0; i < b.N; i++ {
		for _, withLAM := range []bool{false, true} {
			mode := "transcript"
			if withLAM {
				mode = "lam"
			}
			// The sizes' rounds alternate (1 MB, 1 GB, 1 MB, …), so that a
			// change in the machine's load weighs on both alike.
			type sample struct {
				owns, floors, hooks, bds, ownCPU, floorCPU []time.Duration
				rs                                         []int64
			}
			ins, samples := make([][]byte, len(sizes)), make([]sample, len(sizes))
			tps := make([]string, len(sizes))
			for k, sz := range sizes {
				tp := benchTranscript(b, dir, sz.n)
				defer os.Remove(tp)
				tps[k] = tp
				fields := map[string]any{"session_id": "s-" + mode + sz.name, "cwd": root, "hook_event_name": "Stop", "transcript_path": tp}
				if withLAM {
					fields["last_assistant_message"] = "I made progress on the epic."
				}
				ins[k], _ = json.Marshal(fields)
			}
			for r := 0; r < ownRuns; r++ {
				for k := range sizes {
					in, sm := ins[k], &samples[k]
					benchTurn(b, tps[k], r)
					tBD, _ := runTimed(b, root, env, nil, bd, "ready", "--json", "--limit", "0", "--parent", faultEpic)
					cBD := cpuTime
					tFloor, _ := runTimed(b, root, env, in, floor)
					sm.floorCPU = append(sm.floorCPU, cpuTime)
					tHook, out := runTimed(b, root, env, in, bin, "stop-hook", "--epic", faultEpic)
					sm.ownCPU = append(sm.ownCPU, cpuTime-cBD)
					if !bytes.Contains(out, []byte(`"decision":"block"`)) {
						b.Fatalf("stop-hook did not block: %s", out)
					}
					sm.owns, sm.floors, sm.hooks, sm.bds = append(sm.owns, tHook-tBD), append(sm.floors, tFloor), append(sm.hooks, tHook), append(sm.bds, tBD)
				}
			}
			// Token accounting was on: every turn's usage was counted.
			for _, sz := range sizes {
				if got, least := benchSpent(b, root, "s-"+mode+sz.name), int64(ownRuns*benchTurnTokens); got < least {
					b.Fatalf("session s-%s%s spent %d tokens, want at least the %d of its %d turns", mode, sz.name, got, least, ownRuns)
				}
			}
			for r := 0; r < benchRuns; r++ {
				for k := range sizes {
					samples[k].rs = append(samples[k].rs, runChild(b, root, env, ins[k], bin, "stop-hook", "--epic", faultEpic).maxRSS)
				}
			}
			own := map[string]time.Duration{}
			rss := map[string]int64{}
			for k, sz := range sizes {
				sm := samples[k]
				own[sz.name], rss[sz.name] = median(sm.owns), medianInt(sm.rs)
				key := mode + "-" + sz.name
				b.ReportMetric(ms(median(sm.hooks)), key+"-hook-ms")
				b.ReportMetric(ms(median(sm.bds)), key+"-bd-ms")
				b.ReportMetric(ms(own[sz.name]), key+"-own-ms")
				b.ReportMetric(ms(median(sm.floors)), key+"-floor-ms")
				b.ReportMetric(float64(own[sz.name])/float64(median(sm.floors)), key+"-own/floor")
				b.ReportMetric(float64(rss[sz.name])/(1<<20), key+"-rss-MB")
				b.ReportMetric(ms(median(sm.ownCPU)), key+"-own-cpu-ms")
				b.ReportMetric(float64(median(sm.ownCPU))/float64(median(sm.floorCPU)), key+"-own/floor-cpu")
			}
			b.ReportMetric(float64(own["1GB"])/float64(own["1MB"]), mode+"-own-1GB/1MB")
			b.ReportMetric(float64(rss["1GB"])/float64(rss["1MB"]), mode+"-rss-1GB/1MB")
		}
	}
}

// BenchmarkReasonSize: the block reason's size for a 3-task and a
// 1,000-task epic, at cycle 1 and cycle 50 (max_cycles 100). The reason
// must not grow with the tasks or the cycles: the ratios should be about 1.
func BenchmarkReasonSize(b *testing.B) {
	tasks := func(n int) string {
		var s []string
		for i := 1; i <= n; i++ {
			s = append(s, fmt.Sprintf(`{"id":"bd-e.%d","title":"Task number %d with a title of ordinary length","status":"open","priority":2,"issue_type":"task","parent":"bd-e"}`, i, i))
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	size := map[string]int{}
	for i := 0; i < b.N; i++ {
		for _, n := range []int{3, 1000} {
			dir := b.TempDir()
			os.WriteFile(filepath.Join(dir, "ready.json"), []byte(tasks(n)), 0o644)
			bd := filepath.Join(dir, "bd")
			os.WriteFile(bd, []byte("#!/bin/sh\ncase \"$1\" in ready) cat '"+filepath.Join(dir, "ready.json")+"';; *) echo '[]';; esac\n"), 0o755)
			root := filepath.Join(dir, "proj")
			os.MkdirAll(filepath.Join(root, ".git"), 0o755)
			os.MkdirAll(filepath.Join(root, ".beads"), 0o755)
			env := append(os.Environ(), "RUNTASKS_BD="+bd, "BD_DISABLE_METRICS=1",
				"RUNTASKS_WORKFLOW__NO_PROGRESS_CYCLES=0", "RUNTASKS_MAX_CYCLES=100", "XDG_CONFIG_HOME="+b.TempDir(), "CLAUDE_PROJECT_DIR=")
			for _, cycle := range []int{1, 50} {
				session := fmt.Sprintf("s-%d-%d", n, cycle)
				if cycle > 1 {
					store := &state.Store{Dir: filepath.Join(root, ".runtasks")}
					if _, err := store.Update(session, faultEpic, func(st *state.State) error { st.Cycles = cycle - 1; return nil }); err != nil {
						b.Fatal(err)
					}
				}
				in, _ := json.Marshal(map[string]any{"session_id": session, "cwd": root, "hook_event_name": "Stop", "last_assistant_message": "progress"})
				var out, errOut bytes.Buffer
				f := &Factory{In: bytes.NewReader(in), Out: &out, Err: &errOut, Environ: func() []string { return env },
					Getwd: func() (string, error) { return root, nil }, Now: time.Now, Executable: func() (string, error) { return "runtasks", nil }}
				if code := Main([]string{"stop-hook", "--epic", faultEpic}, f); code != 0 {
					b.Fatalf("exit %d: %s", code, errOut.String())
				}
				var a stopAnswer
				if err := json.Unmarshal(out.Bytes(), &a); err != nil || a.Decision != "block" || !strings.Contains(a.Reason, "cycle "+strconv.Itoa(cycle)+"/") {
					b.Fatalf("tasks %d cycle %d: %q %v", n, cycle, out.String(), err)
				}
				key := fmt.Sprintf("%dtasks-cycle%d", n, cycle)
				size[key] = len(a.Reason)
				b.ReportMetric(float64(len(a.Reason)), "bytes-"+key)
			}
		}
		b.ReportMetric(float64(size["1000tasks-cycle50"])/float64(size["3tasks-cycle1"]), "1000t-c50/3t-c1")
		b.ReportMetric(float64(size["1000tasks-cycle1"])/float64(size["3tasks-cycle1"]), "1000t/3t")
		b.ReportMetric(float64(size["3tasks-cycle50"])/float64(size["3tasks-cycle1"]), "c50/c1")
	}
}

// BenchmarkStatus10k: `runtasks status` over 10,000 logged decisions (100
// sessions), against 100 decisions as the baseline: wall time and peak RSS
// of the child process.
func BenchmarkStatus10k(b *testing.B) {
	bin := benchBinary(b)
	seed := func(records int) string {
		root := filepath.Join(b.TempDir(), "proj")
		os.MkdirAll(filepath.Join(root, ".git"), 0o755)
		store := &state.Store{Dir: filepath.Join(root, ".runtasks")}
		const sessions = 100
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var log bytes.Buffer
		for i := 0; i < records; i++ {
			s := fmt.Sprintf("session-%03d", i%sessions)
			rec := state.Record{Time: t0.Add(time.Duration(i) * time.Second), Session: s, Epic: faultEpic, Agent: "claude", Event: "Stop",
				Outcome: state.OutcomeContinue, Block: true, Cycle: i/sessions + 1, Max: 1000, Why: "2 ready",
				Counts: &state.Counts{Ready: 2}}
			line, err := json.Marshal(rec)
			if err != nil {
				b.Fatal(err)
			}
			log.Write(line)
			log.WriteByte('\n')
		}
		for s := 0; s < sessions && s < records; s++ {
			store.Update(fmt.Sprintf("session-%03d", s), faultEpic, func(st *state.State) error { st.Cycles = records / sessions; return nil })
		}
		if err := os.WriteFile(store.LogPath(), log.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		return root
	}
	env := append(os.Environ(), "HOME="+b.TempDir())
	for i := 0; i < b.N; i++ {
		res := map[int]struct {
			wall time.Duration
			rss  int64
		}{}
		for _, n := range []int{100, 10000} {
			root := seed(n)
			var ws []time.Duration
			var rs []int64
			for r := 0; r < benchRuns; r++ {
				c := runChild(b, root, env, nil, bin, "status", "--json")
				if !bytes.Contains(c.stdout, []byte("session-099")) {
					b.Fatalf("status lacks the sessions: %.200s", c.stdout)
				}
				ws, rs = append(ws, c.wall), append(rs, c.maxRSS)
			}
			res[n] = struct {
				wall time.Duration
				rss  int64
			}{median(ws), medianInt(rs)}
			b.ReportMetric(ms(median(ws)), fmt.Sprintf("status-%d-ms", n))
			b.ReportMetric(float64(medianInt(rs))/(1<<20), fmt.Sprintf("status-%d-rss-MB", n))
		}
		b.ReportMetric(float64(res[10000].wall)/float64(res[100].wall), "time-10k/100")
		b.ReportMetric(float64(res[10000].rss)/float64(res[100].rss), "rss-10k/100")
	}
}

// BenchmarkRunBookkeeping: what `runtasks run` does between two agent
// runs, from one agent's exit to the next one's start (issue 17): how many
// bd calls and how long. The agent is a script that logs its start and
// exit times and answers at once; bd is the instant bd of testdata/bench,
// logging each call's start. Ready work remains at every cycle, so every
// decision blocks and the run goes on to --max-cycles. Between two agent
// runs bd runs twice: the decision's bd ready (the stop hook's query, as
// the hook asks it) and the count's bd list --all.
func BenchmarkRunBookkeeping(b *testing.B) {
	bin := benchBinary(b)
	tools := b.TempDir()
	bd := benchProgram(b, tools, "instantbd")
	const cycles, callsBetween = 6, 2
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		root := gitRepo(b, filepath.Join(dir, "proj"))
		agentLog, bdLog := filepath.Join(dir, "agent.log"), filepath.Join(dir, "bd.log")
		agent := filepath.Join(tools, "claude")
		script := "#!/bin/sh\necho \"start $(date +%s%N)\" >> '" + agentLog + "'\n" +
			`echo '{"type":"result","subtype":"success","is_error":false,"result":"Progress made.","session_id":"s-bench"}'` + "\n" +
			"echo \"exit $(date +%s%N)\" >> '" + agentLog + "'\n"
		if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "project.yaml"), []byte("run:\n  claude_bin: "+agent+"\nworkflow:\n  no_progress_cycles: 0\n"), 0o644)
		env := append(os.Environ(), "RUNTASKS_BD="+bd, "INSTANTBD_LOG="+bdLog, "BD_DISABLE_METRICS=1", "HOME="+b.TempDir())
		cmd := exec.Command(bin, "run", "--epic", faultEpic, "--max-cycles", strconv.Itoa(cycles))
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != engine.ExitWorkLeft {
			b.Fatalf("runtasks run: exit %d (%v), want %d\n%s", code, err, engine.ExitWorkLeft, out)
		}
		stamps := func(path string) (ts []int64, what []string) {
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				f := strings.Fields(line)
				if len(f) < 2 {
					b.Fatalf("%s: line %q", path, line)
				}
				// agent.log: "start|exit NS"; bd.log: "NS args…".
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					ts, what = append(ts, n), append(what, strings.Join(f[1:], " "))
				} else if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					ts, what = append(ts, n), append(what, f[0])
				} else {
					b.Fatalf("%s: line %q", path, line)
				}
			}
			return ts, what
		}
		at, aw := stamps(agentLog)
		bt, bw := stamps(bdLog)
		if len(at) != 2*cycles {
			b.Fatalf("agent log: %d lines, want %d", len(at), 2*cycles)
		}
		var gaps []time.Duration
		var calls []int64
		for c := 0; c+1 < cycles; c++ {
			exit, next := at[2*c+1], at[2*c+2]
			if aw[2*c+1] != "exit" || aw[2*c+2] != "start" {
				b.Fatalf("agent log out of order: %v", aw)
			}
			n := int64(0)
			for j, t := range bt {
				if t > exit && t < next {
					n++
					if c == 0 {
						b.Logf("between runs 1 and 2: bd %s", bw[j])
					}
				}
			}
			if n != callsBetween {
				b.Errorf("between runs %d and %d: %d bd calls, want %d", c+1, c+2, n, callsBetween)
			}
			gaps, calls = append(gaps, time.Duration(next-exit)), append(calls, n)
		}
		b.ReportMetric(float64(medianInt(calls)), "bd-calls-between-runs")
		b.ReportMetric(ms(median(gaps)), "between-runs-ms")
		b.ReportMetric(float64(len(bt)), "bd-calls-total")
	}
}
