package headless

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
)

// TestMain lets the test binary play a Codex CLI (codex exec --json) when
// HEADLESS_FAKE_CODEX is set: it logs its arguments, closes one task (a line
// in the closes file that fakeBeads reads) and prints exec --json events.
func TestMain(m *testing.M) {
	if os.Getenv("HEADLESS_FAKE_CODEX") != "" {
		os.Exit(fakeCodex())
	}
	os.Exit(m.Run())
}

func fakeCodex() int {
	args := os.Args[1:]
	f, _ := os.OpenFile(os.Getenv("HEADLESS_ARGS_LOG"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	fmt.Fprintln(f, strings.Join(args[:len(args)-1], " ")) // all but the prompt
	f.Close()
	thread := fmt.Sprintf("thread-%d", os.Getpid())
	for i, a := range args {
		if a == "resume" && i+1 < len(args) {
			thread = args[i+1]
		}
	}
	fmt.Printf(`{"type":"thread.started","thread_id":%q}`+"\n", thread)
	fmt.Println(`{"type":"turn.started"}`)
	if os.Getenv("HEADLESS_FAKE_CODEX") == "slow" {
		fmt.Println(`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"sleep 60","aggregated_output":"","exit_code":null,"status":"in_progress"}}`)
		time.Sleep(60 * time.Second)
		return 0
	}
	// A worker's agent (RUNTASKS_TASK) closes its task, after a pause,
	// unless HEADLESS_KEEP_OPEN names it: then its first merge "fails". In
	// mode checkpoint, its first run on a task ends at a context
	// checkpoint instead.
	task := os.Getenv("RUNTASKS_TASK")
	if task != "" {
		time.Sleep(200 * time.Millisecond)
		if os.Getenv("HEADLESS_CRASH") == task {
			fmt.Fprintln(os.Stderr, "panic: the agent crashed on "+task)
			return 1
		}
		mark := os.Getenv("HEADLESS_CLOSES") + ".kept-" + task
		if _, err := os.Stat(mark); os.Getenv("HEADLESS_KEEP_OPEN") == task && err != nil {
			os.WriteFile(mark, nil, 0o644)
			text := "The merge failed: conflict."
			if os.Getenv("HEADLESS_FAKE_CODEX") == "checkpoint" {
				text = "Context is running out; my work is committed.\n<promise>CONTEXT LIMIT - CHECKPOINT</promise>"
			}
			fmt.Printf(`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":%q}}`+"\n", text)
			fmt.Println(`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}`)
			return 0
		}
	}
	c, _ := os.OpenFile(os.Getenv("HEADLESS_CLOSES"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	fmt.Fprintln(c, "closed "+task)
	c.Close()
	fmt.Println(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bd close t","aggregated_output":"","exit_code":0,"status":"completed"}}`)
	fmt.Println(`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Closed one task."}}`)
	if d, err := time.ParseDuration(os.Getenv("HEADLESS_AFTER_CLOSE")); err == nil {
		time.Sleep(d) // heartbeats meet the closed task before the agent exits
	}
	fmt.Println(`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}`)
	return 0
}

// fakeBeads serves an epic of total tasks, as many closed as the fake agent
// wrote lines to the closes file.
type fakeBeads struct {
	total  int
	closes string
	calls  []string
}

func (b *fakeBeads) closed() int {
	data, _ := os.ReadFile(b.closes)
	return min(bytes.Count(data, []byte("\n")), b.total)
}

func (b *fakeBeads) open() []beads.Issue {
	var out []beads.Issue
	for i := b.closed() + 1; i <= b.total; i++ {
		out = append(out, beads.Issue{ID: fmt.Sprintf("E.%d", i), Title: "task", Status: beads.StatusOpen})
	}
	return out
}

func (b *fakeBeads) Ready(ctx context.Context, epic string) ([]beads.Issue, error) {
	b.calls = append(b.calls, "ready")
	return b.open(), nil
}
func (b *fakeBeads) Subtree(ctx context.Context, epic string) ([]beads.Issue, error) {
	b.calls = append(b.calls, "subtree")
	return b.open(), nil
}
func (b *fakeBeads) Descendants(context.Context, string) (beads.Issue, []beads.Issue, error) {
	return beads.Issue{}, nil, errors.New("fakeBeads lists no closed tasks")
}
func (b *fakeBeads) Show(ctx context.Context, id string) (beads.Issue, error) {
	b.calls = append(b.calls, "show")
	return beads.Issue{ID: id, Status: beads.StatusOpen, IssueType: "epic"}, nil
}
func (b *fakeBeads) Tally(ctx context.Context, epic string) (beads.Tally, error) {
	b.calls = append(b.calls, "tally")
	return beads.Tally{Closed: b.closed(), Total: b.total}, nil
}

func setup(t *testing.T, mode, yaml string) (*config.Config, *fakeBeads, string) {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	yaml = "workflow:\n  epic: E\nrun:\n  agent: codex\n  codex_bin: " + exe + "\n" + yaml
	if err := os.WriteFile(filepath.Join(dir, "project.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(config.LoadOptions{StartDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	argsLog := filepath.Join(dir, "args.log")
	closes := filepath.Join(dir, "closes")
	t.Setenv("HEADLESS_FAKE_CODEX", mode)
	t.Setenv("HEADLESS_ARGS_LOG", argsLog)
	t.Setenv("HEADLESS_CLOSES", closes)
	return cfg, &fakeBeads{total: 2, closes: closes}, argsLog
}

// With run.session resume, the second Codex cycle continues the first
// cycle's thread; the run ends when the engine says complete.
func TestRunCodexResume(t *testing.T) {
	cfg, fb, argsLog := setup(t, "close", "  session: resume\n")
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Config: cfg, Args: []string{"--full-auto"}, Beads: fb,
		Environ: os.Environ(), Out: &out, RunID: "t1"})
	if err != nil || res.Code != engine.ExitOK || res.Cycles != 2 || res.ClosedThisRun != 2 {
		t.Fatalf("Run = %+v, %v\n%s", res, err, out.String())
	}
	log, _ := os.ReadFile(argsLog)
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 2 || lines[0] != "exec --json --full-auto --" || !strings.HasPrefix(lines[1], "exec --json --full-auto resume thread-") {
		t.Fatalf("agent arguments:\n%s", log)
	}
	st, err := ReadRun(res.Dir)
	if err != nil || st.Status != "complete" || len(st.Cycles) != 2 || !st.Cycles[1].Resumed ||
		st.Cycles[0].SessionID != st.Cycles[1].SessionID || st.Cycles[1].Final != "Closed one task." {
		t.Fatalf("run.json = %+v, %v", st, err)
	}
	if !strings.Contains(out.String(), "cycle 2/50 · ") || !strings.Contains(out.String(), "$ bd close t") {
		t.Errorf("progress lacks the cycle or the action:\n%s", out.String())
	}
}

// run.session fresh starts every Codex cycle anew.
func TestRunCodexFresh(t *testing.T) {
	cfg, fb, argsLog := setup(t, "close", "")
	res, err := Run(context.Background(), Options{Config: cfg, Beads: fb, Environ: os.Environ(), RunID: "t2"})
	if err != nil || res.Code != engine.ExitOK {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	log, _ := os.ReadFile(argsLog)
	if strings.Contains(string(log), "resume") {
		t.Fatalf("a fresh run resumed:\n%s", log)
	}
}

// Between two agent runs, the decision asks the stop hook's ports (what is
// ready under the epic: one Ready while work is ready) and the count after
// it is one Tally.
func TestRunAsksThePorts(t *testing.T) {
	cfg, fb, _ := setup(t, "close", "")
	hook := &fakeBeads{total: fb.total, closes: fb.closes}
	res, err := Run(context.Background(), Options{Config: cfg, Beads: fb, Ports: engine.Ports{Beads: hook},
		Environ: os.Environ(), RunID: "t4"})
	if err != nil || res.Code != engine.ExitOK || res.Cycles != 2 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	// The first decision starts cycle 1 (two ready); cycle 1 leaves one
	// task ready; cycle 2 closes the last one, so the engine reads the
	// rest of the subtree and makes sure the epic exists.
	if got, want := strings.Join(hook.calls, " "), "ready ready ready subtree show"; got != want {
		t.Errorf("the decisions asked %q, want %q", got, want)
	}
	if got, want := strings.Join(fb.calls, " "), "tally tally tally"; got != want {
		t.Errorf("the counts asked %q, want %q (the first count, then one per cycle)", got, want)
	}
}

// workflow.max_duration (--max-duration) stops the agent in the middle of
// a cycle at the engine's deadline; the engine then ends the loop: exit 2,
// state recorded.
func TestRunMaxDuration(t *testing.T) {
	cfg, fb, _ := setup(t, "slow", "")
	cfg.Workflow.MaxDuration = 500 * time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), Options{Config: cfg, Beads: fb, Environ: os.Environ(), Grace: time.Second, RunID: "t3"})
	if err != nil || res.Code != engine.ExitWorkLeft || res.Outcome != state.OutcomeCapReached {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the agent was not stopped in time: %s", d)
	}
	st, _ := ReadRun(res.Dir)
	if st.Status != "limit" || st.ExitCode == nil || *st.ExitCode != engine.ExitWorkLeft || !strings.Contains(st.Why, "max_duration 500ms spent") ||
		st.Deadline.IsZero() || st.Cycles[0].Outcome != state.OutcomeCapReached {
		t.Errorf("run.json = %+v", st)
	}
}

// On a terminal, progress is one live line with a bar, redrawn in place.
func TestProgressTTY(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := &progress{out: &out, tty: true, now: func() time.Time { return now }, start: now.Add(-83 * time.Second), max: 10}
	p.Tally(1, 4)
	p.closedAtStart = 1
	p.Cycle(2, 10)
	p.Tally(2, 4)
	p.Action("Bash: go test ./...", false)
	p.Printf("a permanent line")
	p.Done()
	want := "\r\x1b[Kcycle 2/10 · 1:23 · [#####-----] 2/4 closed (+1 this run) · Bash: go test ./..."
	if !strings.Contains(out.String(), want) {
		t.Errorf("no live line %q in %q", want, out.String())
	}
	if !strings.Contains(out.String(), "\r\x1b[Ka permanent line\n") || !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("permanent lines and the end do not clear the live line: %q", out.String())
	}
}

// A log line (Ctrl-C's WARN) on the terminal of the live lines clears
// them first and they are drawn again after it: it never lands inside.
func TestLogLineAboveLiveLines(t *testing.T) {
	var term bytes.Buffer
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := &progress{out: &term, tty: true, now: func() time.Time { return now }, start: now, max: 10}
	l := log.New(io.Discard)
	logAbove(Options{TTY: true, Log: l, LogOut: &term}, p)
	p.Tally(1, 4)
	l.Warn("killing its process group")
	live := "\r\x1b[K" + p.status()
	if want := live + "\r\x1b[KWARN killing its process group\n" + live; term.String() != want {
		t.Errorf("progress:\n got %q\nwant %q", term.String(), want)
	}
	term.Reset()
	s := newScreen(&term, true, 2, nil)
	logAbove(Options{TTY: true, Log: l, LogOut: &term}, s)
	fmt.Fprintln(slotWriter{s, 0}, "one")
	fmt.Fprintln(slotWriter{s, 1}, "two")
	term.Reset()
	l.Warn("killing its process group")
	if want := "\x1b[2A\r\x1b[JWARN killing its process group\n\r\x1b[Kw1 one\n\r\x1b[Kw2 two\n"; term.String() != want {
		t.Errorf("workers:\n got %q\nwant %q", term.String(), want)
	}
}

func TestElapsedAndBar(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00", 59 * time.Second: "0:59", 61 * time.Second: "1:01", 3725 * time.Second: "1:02:05", -time.Second: "0:00"} {
		if got := Elapsed(d); got != want {
			t.Errorf("Elapsed(%s) = %q, want %q", d, got, want)
		}
	}
	for _, tt := range []struct {
		done, total int
		want        string
	}{{0, 4, "[----]"}, {2, 4, "[##--]"}, {4, 4, "[####]"}, {0, 0, "[----]"}, {5, 4, "[####]"}} {
		if got := Bar(tt.done, tt.total, 4); got != tt.want {
			t.Errorf("Bar(%d, %d) = %q, want %q", tt.done, tt.total, got, tt.want)
		}
	}
}

// A run's id, and a workers' run's (one rule, in withDefaults): the UTC
// time and a random hex suffix (docs/run.md); a given id is kept.
func TestRunIDs(t *testing.T) {
	cfg := &config.Config{Run: config.Run{Dir: t.TempDir()}}
	at := func() time.Time { return time.Date(2026, 11, 27, 11, 40, 2, 0, time.UTC) }
	a, b := Options{Config: cfg, Now: at}.withDefaults().RunID, Options{Config: cfg, Now: at}.withDefaults().RunID
	for _, id := range []string{a, b} {
		if !regexp.MustCompile(`^20261127T114002Z-[0-9a-f]{6}$`).MatchString(id) {
			t.Errorf("run id %q", id)
		}
	}
	if a == b {
		t.Errorf("two runs in the same second share the id %q", a)
	}
	if id := (Options{Config: cfg, Now: at, RunID: "mine"}).withDefaults().RunID; id != "mine" {
		t.Errorf("given id became %q", id)
	}
}
