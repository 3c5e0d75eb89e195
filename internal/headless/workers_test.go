package headless

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
)

// fakeClaims is an in-memory epic with bd's claim semantics: a claim is a
// compare-and-set on the assignee, a release clears it, a close is a line
// "closed ID" in the closes file the fake agent writes.
type fakeClaims struct {
	mu      sync.Mutex
	ids     []string
	holder  map[string]string
	notes   map[string]string
	closes  string
	foreign map[string]bool // claimed by another machine at the first try
	late    map[string]bool // its first claim lands but times out
	// stolen: its first heartbeat finds it reclaimed and taken by "thief".
	stolen   map[string]bool
	expired  map[string]bool // held by a machine that stopped: its lease lapsed
	reclaims []string
	beats    int
	releases []string
	claims   []string
}

func (f *fakeClaims) closed(id string) bool {
	data, _ := os.ReadFile(f.closes)
	for _, l := range strings.Split(string(data), "\n") {
		if fs := strings.Fields(l); len(fs) >= 2 && fs[0] == "closed" && fs[1] == id {
			return true
		}
	}
	return false
}

func (f *fakeClaims) issue(id string) beads.Issue {
	is := beads.Issue{ID: id, Title: "task " + id, Status: beads.StatusOpen, IssueType: "task", Notes: f.notes[id]}
	switch {
	case f.closed(id):
		is.Status = beads.StatusClosed
	case f.holder[id] == "blocked":
		is.Status = beads.StatusBlocked
	case f.holder[id] != "":
		is.Status, is.Assignee = beads.StatusInProgress, f.holder[id]
		is.LeaseExpiresAt = time.Now().Add(5 * time.Minute)
		if f.expired[id] {
			is.LeaseExpiresAt = time.Now().Add(-time.Minute)
		}
	}
	return is
}

func (f *fakeClaims) all() []beads.Issue {
	var out []beads.Issue
	for _, id := range f.ids {
		if is := f.issue(id); is.Status != beads.StatusClosed {
			out = append(out, is)
		}
	}
	return out
}

func (f *fakeClaims) Ready(context.Context, string) ([]beads.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []beads.Issue
	for _, is := range f.all() {
		if is.Status == beads.StatusOpen {
			out = append(out, is)
		}
	}
	return out, nil
}

func (f *fakeClaims) Subtree(context.Context, string) ([]beads.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.all(), nil
}

func (f *fakeClaims) Descendants(context.Context, string) (beads.Issue, []beads.Issue, error) {
	return beads.Issue{}, nil, errors.New("fakeClaims lists no closed tasks")
}

func (f *fakeClaims) Show(_ context.Context, id string) (beads.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id == "E" {
		return beads.Issue{ID: "E", Status: beads.StatusOpen, IssueType: "epic"}, nil
	}
	return f.issue(id), nil
}

func (f *fakeClaims) Tally(context.Context, string) (beads.Tally, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, id := range f.ids {
		if f.closed(id) {
			n++
		}
	}
	return beads.Tally{Closed: n, Total: len(f.ids)}, nil
}

func (f *fakeClaims) ClaimID(_ context.Context, id, actor string) (beads.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.late[id] { // the claim lands, its answer does not come back in time
		f.late[id] = false
		f.holder[id] = actor
		return beads.Issue{}, &beads.Error{Kind: beads.KindTimeout, Code: -1, Msg: "no answer within 10s"}
	}
	if f.foreign[id] {
		f.foreign[id] = false
		f.holder[id] = "other@host"
		return beads.Issue{}, &beads.Error{Kind: beads.KindFailed, Code: 1, Msg: "updating issue: issue already claimed by other@host"}
	}
	if h := f.holder[id]; h != "" || f.closed(id) {
		return beads.Issue{}, &beads.Error{Kind: beads.KindFailed, Code: 1, Msg: "issue already claimed by " + h}
	}
	f.holder[id] = actor
	f.claims = append(f.claims, id+" "+actor)
	return f.issue(id), nil
}

func (f *fakeClaims) Heartbeat(_ context.Context, id, actor string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stolen[id] {
		f.stolen[id] = false
		f.holder[id] = "thief"
		return &beads.Error{Kind: beads.KindFailed, Code: 1, Msg: "heartbeat " + id + ": issue not claimable: " + id + " status open"}
	}
	if f.closed(id) {
		return &beads.Error{Kind: beads.KindFailed, Code: 1, Msg: "heartbeat " + id + ": issue not claimable: " + id + " status closed"}
	}
	if f.holder[id] != actor {
		return errors.New("heartbeat " + id + ": issue already claimed by " + f.holder[id])
	}
	f.beats++
	return nil
}

func (f *fakeClaims) Reclaim(_ context.Context, ids ...string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var got []string
	for _, id := range ids {
		if f.expired[id] {
			delete(f.holder, id)
			delete(f.expired, id)
			got = append(got, id)
		}
	}
	f.reclaims = append(f.reclaims, got...)
	return got, nil
}

func (f *fakeClaims) Release(_ context.Context, id, actor, note string) (beads.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holder[id] != actor {
		return beads.Issue{}, errors.New("not the holder")
	}
	delete(f.holder, id)
	f.notes[id] += note
	f.releases = append(f.releases, id)
	return f.issue(id), nil
}

func (f *fakeClaims) Block(_ context.Context, id, actor, note string) (beads.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holder[id] != actor {
		return beads.Issue{}, errors.New("not the holder")
	}
	f.holder[id] = "blocked"
	f.notes[id] += note
	return f.issue(id), nil
}

// Two workers on four tasks: a task another machine claims first is passed
// over (and, held by it, never worked here); a task whose agent does not
// close it goes back with the agent's words and is worked again; leases
// are renewed while agents run; each worker has its worktree per task; the
// run ends complete when the engine says so.
func TestRunWorkers(t *testing.T) {
	cfg, _, _ := setup(t, "close", "")
	root := cfg.Root
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	t.Setenv("HEADLESS_KEEP_OPEN", "E.3")
	fc := &fakeClaims{ids: []string{"E.1", "E.2", "E.3", "E.4"}, holder: map[string]string{}, notes: map[string]string{},
		closes: os.Getenv("HEADLESS_CLOSES"), foreign: map[string]bool{"E.4": true}}
	// E.4 stays held by the other machine: it closes it itself, later,
	// once a worker has said it waits for it.
	out := &syncBuffer{}
	go func() {
		for fc.closedCount() < 3 || !out.Contains("· waiting: nothing ready to claim; work remains: 0 ready, ") {
			time.Sleep(50 * time.Millisecond)
		}
		f, _ := os.OpenFile(fc.closes, os.O_APPEND|os.O_WRONLY, 0o644)
		fmt.Fprintln(f, "closed E.4")
		f.Close()
	}()
	var mu sync.Mutex
	var notified []string
	ports := engine.Ports{Notify: func(_ engine.Input, dec engine.Decision) {
		mu.Lock()
		notified = append(notified, string(dec.Outcome))
		mu.Unlock()
	}}
	res, err := RunWorkers(context.Background(), Options{Config: cfg, Beads: fc, Ports: ports, Environ: os.Environ(), Out: out, RunID: "wk"},
		WorkerOptions{N: 2, Actor: "me", Heartbeat: 50 * time.Millisecond, IdlePoll: 100 * time.Millisecond})
	if err != nil || res.Code != engine.ExitOK {
		t.Fatalf("RunWorkers = %+v, %v\n%s", res, err, out.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", out.String())
		}
	}()
	// Both workers saw the epic complete: one notify.
	if !slices.Equal(notified, []string{"complete"}) {
		t.Errorf("notified %v, want complete once", notified)
	}
	// Every agent run's usage (10 in, 5 out) is in its worker's decision.
	store := &state.Store{Dir: cfg.StateDir()}
	recs, _ := store.Records(state.RecordFilter{})
	withUsage := 0
	for _, r := range recs {
		if r.Usage != nil && r.Usage.Total() == 15 {
			withUsage++
		}
	}
	if runs := res.Cycles; withUsage != runs || runs < 4 {
		t.Errorf("%d decisions recorded usage, want one per agent run (%d)", withUsage, runs)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for _, c := range fc.claims {
		if strings.HasPrefix(c, "E.4 ") {
			t.Errorf("E.4, held by another machine, was claimed here: %v", fc.claims)
		}
	}
	if !slices.Equal(fc.releases, []string{"E.3"}) || !strings.Contains(fc.notes["E.3"], "given back. Agent's last words: The merge failed: conflict.") {
		t.Errorf("releases %v, notes %q; want E.3 given back with the agent's words", fc.releases, fc.notes["E.3"])
	}
	if fc.beats == 0 {
		t.Error("no lease was renewed")
	}
	// Closed and merged (nothing new on their branches): worktrees and branches removed.
	for _, id := range []string{"E.1", "E.2", "E.3"} {
		if _, err := os.Stat(filepath.Join(root, ".worktrees", "agent-"+id)); err == nil {
			t.Errorf("the worktree of %s, closed, is left", id)
		}
	}
	if b, _ := exec.Command("git", "-C", root, "branch", "--list", "agent/*").Output(); len(b) > 0 {
		t.Errorf("branches left: %s", b)
	}
	for _, want := range []string{"runtasks run: epic E · 2 workers · codex · merging into main", "w1 cycle 1/50", "w2 cycle 1/50", "E.3 given back", "2 workers ended", "4/4 closed; exit 0",
		"· waiting: nothing ready to claim; work remains: 0 ready, "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func (f *fakeClaims) closedCount() int {
	data, _ := os.ReadFile(f.closes)
	return strings.Count(string(data), "closed E.")
}

// A heartbeat that finds the task taken (reclaimed after a lapsed lease,
// claimed by another): the agent is stopped at once, the task is not given
// back (it is not this worker's), and the run goes on.
func TestRunWorkersLeaseLost(t *testing.T) {
	cfg, _, _ := setup(t, "close", "")
	root := cfg.Root
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	t.Setenv("HEADLESS_KEEP_OPEN", "")
	fc := &fakeClaims{ids: []string{"E.1", "E.2"}, holder: map[string]string{}, notes: map[string]string{},
		closes: os.Getenv("HEADLESS_CLOSES"), foreign: map[string]bool{}, stolen: map[string]bool{"E.1": true}}
	go func() { // the thief finishes E.1 after E.2 is closed
		for !fc.closedLocked("E.2") {
			time.Sleep(50 * time.Millisecond)
		}
		f, _ := os.OpenFile(fc.closes, os.O_APPEND|os.O_WRONLY, 0o644)
		fmt.Fprintln(f, "closed E.1 by thief")
		f.Close()
	}()
	var out bytes.Buffer
	res, err := RunWorkers(context.Background(), Options{Config: cfg, Beads: fc, Environ: os.Environ(), Out: &out, RunID: "wl", Grace: time.Second},
		WorkerOptions{N: 1, Actor: "me", Heartbeat: 20 * time.Millisecond, IdlePoll: 100 * time.Millisecond})
	if err != nil || res.Code != engine.ExitOK {
		t.Fatalf("RunWorkers = %+v, %v\n%s", res, err, out.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", out.String())
		}
	}()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.releases) != 0 {
		t.Errorf("released %v: a task taken by another is not this worker's to give back", fc.releases)
	}
	data, _ := os.ReadFile(fc.closes)
	if strings.Contains(string(data), "closed E.1\n") {
		t.Errorf("the agent of a lost task went on and closed it:\n%s", data)
	}
	if !strings.Contains(out.String(), "E.1: lease lost (") || !strings.Contains(out.String(), "issue not claimable: E.1 status open): stopping the agent") ||
		!strings.Contains(out.String(), "E.1 lost to another worker") {
		t.Errorf("output:\n%s", out.String())
	}
}

func (f *fakeClaims) closedLocked(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed(id)
}

// A worker whose agent meets a context checkpoint goes on: the engine
// counts that cycle, the task goes back and is worked again in a fresh
// context, and the run ends complete.
func TestRunWorkersCheckpoint(t *testing.T) {
	cfg, _, _ := setup(t, "checkpoint", "")
	root := cfg.Root
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	t.Setenv("HEADLESS_KEEP_OPEN", "E.1")
	fc := &fakeClaims{ids: []string{"E.1"}, holder: map[string]string{}, notes: map[string]string{},
		closes: os.Getenv("HEADLESS_CLOSES"), foreign: map[string]bool{}}
	var out bytes.Buffer
	res, err := RunWorkers(context.Background(), Options{Config: cfg, Beads: fc, Environ: os.Environ(), Out: &out, RunID: "wc"},
		WorkerOptions{N: 1, Actor: "me", Heartbeat: time.Minute, IdlePoll: 50 * time.Millisecond})
	if err != nil || res.Code != engine.ExitOK || res.Cycles != 2 {
		t.Fatalf("RunWorkers = %+v, %v; want complete after 2 cycles\n%s", res, err, out.String())
	}
	recs, _ := (&state.Store{Dir: cfg.StateDir()}).Records(state.RecordFilter{Session: "run-wc-w1"})
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %v %d", r.Outcome, r.Block, r.Cycle))
	}
	if want := "continue true 1,checkpoint true 2,complete false 2"; strings.Join(got, ",") != want {
		t.Errorf("decisions %q, want %q", strings.Join(got, ","), want)
	}
	if !strings.Contains(out.String(), "cycle 1/50 · ") || !strings.Contains(out.String(), "E.1 given back · 0/1 closed (+0 this run) · checkpoint: context checkpoint accepted; going on in a fresh context") ||
		!strings.Contains(out.String(), "cycle 2/50 · ") {
		t.Errorf("output:\n%s", out.String())
	}
}

// gitRoot makes cfg.Root a git repository with one commit.
func gitRoot(t *testing.T, root string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// A task whose agent crashes every time: each failure is in its notes and
// the worker goes on; after run.max_task_failures (2) it is quarantined
// (blocked), the other tasks close, and the run needs a person (exit 3).
func TestRunWorkersQuarantine(t *testing.T) {
	cfg, _, _ := setup(t, "close", "")
	gitRoot(t, cfg.Root)
	t.Setenv("HEADLESS_CRASH", "E.2")
	fc := &fakeClaims{ids: []string{"E.1", "E.2", "E.3"}, holder: map[string]string{}, notes: map[string]string{},
		closes: os.Getenv("HEADLESS_CLOSES"), foreign: map[string]bool{}}
	var out bytes.Buffer
	res, err := RunWorkers(context.Background(), Options{Config: cfg, Beads: fc, Environ: os.Environ(), Out: &out, RunID: "wq"},
		WorkerOptions{N: 2, Actor: "me", Heartbeat: time.Minute, IdlePoll: 50 * time.Millisecond})
	if err != nil || res.Code != engine.ExitNeedsPerson || res.Tally.Closed != 2 {
		t.Fatalf("RunWorkers = %+v, %v; want 2/3 closed, exit 3\n%s", res, err, out.String())
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.holder["E.2"] != "blocked" || strings.Count(fc.notes["E.2"], "the agent failed: codex exited with exit status 1: panic: the agent crashed on E.2") != 2 ||
		!strings.Contains(fc.notes["E.2"], "It failed 2 times (run.max_task_failures): quarantined") {
		t.Errorf("E.2 holder %q, notes %q", fc.holder["E.2"], fc.notes["E.2"])
	}
	for _, want := range []string{"E.2 given back", "E.2 failed 2 times: quarantined (blocked, needs a person)", "E.2 quarantined", "2/3 closed; exit 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A claim that lands but whose answer times out: bd shows the task ours,
// and the worker works it at once.
func TestRunWorkersLateClaim(t *testing.T) {
	cfg, _, _ := setup(t, "close", "")
	gitRoot(t, cfg.Root)
	t.Setenv("HEADLESS_KEEP_OPEN", "")
	fc := &fakeClaims{ids: []string{"E.1"}, holder: map[string]string{}, notes: map[string]string{},
		closes: os.Getenv("HEADLESS_CLOSES"), foreign: map[string]bool{}, late: map[string]bool{"E.1": true}}
	var out bytes.Buffer
	res, err := RunWorkers(context.Background(), Options{Config: cfg, Beads: fc, Environ: os.Environ(), Out: &out, RunID: "wt"},
		WorkerOptions{N: 1, Actor: "me", Heartbeat: time.Minute, IdlePoll: time.Hour})
	if err != nil || res.Code != engine.ExitOK || res.Cycles != 1 {
		t.Fatalf("RunWorkers = %+v, %v; want complete in one cycle\n%s", res, err, out.String())
	}
	if !strings.Contains(out.String(), "E.1: the claim's answer failed (bd : timed out: no answer within 10s), but bd shows it ours") {
		t.Errorf("output:\n%s", out.String())
	}
}

// A heartbeat that meets the task its agent just closed stops renewing and
// never stops the agent: 20 races, every task closed by its agent.
func TestRunWorkersHeartbeatAfterClose(t *testing.T) {
	t.Setenv("HEADLESS_AFTER_CLOSE", "150ms")
	t.Setenv("HEADLESS_KEEP_OPEN", "")
	for i := range 20 {
		cfg, _, _ := setup(t, "close", "")
		gitRoot(t, cfg.Root)
		fc := &fakeClaims{ids: []string{"E.1"}, holder: map[string]string{}, notes: map[string]string{},
			closes: os.Getenv("HEADLESS_CLOSES"), foreign: map[string]bool{}}
		var out bytes.Buffer
		res, err := RunWorkers(context.Background(), Options{Config: cfg, Beads: fc, Environ: os.Environ(), Out: &out, RunID: fmt.Sprint("hb", i)},
			WorkerOptions{N: 1, Actor: "me", Heartbeat: 10 * time.Millisecond, IdlePoll: 50 * time.Millisecond})
		if err != nil || res.Code != engine.ExitOK || strings.Contains(out.String(), "stopping the agent") || !strings.Contains(out.String(), "E.1 closed") {
			t.Fatalf("race %d: RunWorkers = %+v, %v\n%s", i, res, err, out.String())
		}
	}
}

// syncBuffer is an output written by several workers and read by a test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Contains(s string) bool { return strings.Contains(b.String(), s) }

// A task another machine held until it stopped (its lease lapsed) is
// reclaimed and worked here, though this repository has no worktree left
// (a closed task's worktree is removed).
func TestRunWorkersReclaimsLapsedLease(t *testing.T) {
	cfg, _, _ := setup(t, "close", "")
	root := cfg.Root
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	fc := &fakeClaims{ids: []string{"E.1", "E.2"}, holder: map[string]string{"E.2": "gone@host3"}, notes: map[string]string{},
		closes: os.Getenv("HEADLESS_CLOSES"), expired: map[string]bool{"E.2": true}}
	out := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // without the reclaim, the worker waits for ever
	defer cancel()
	res, err := RunWorkers(ctx, Options{Config: cfg, Beads: fc, Environ: os.Environ(), Out: out, RunID: "rl"},
		WorkerOptions{N: 1, Actor: "me", Heartbeat: 50 * time.Millisecond, IdlePoll: 100 * time.Millisecond})
	if err != nil || res.Code != engine.ExitOK {
		t.Fatalf("RunWorkers = %+v, %v\n%s", res, err, out.String())
	}
	if !slices.Equal(fc.reclaims, []string{"E.2"}) || !strings.Contains(out.String(), "reclaimed expired lease(s): E.2") {
		t.Errorf("reclaims %v; want E.2 reclaimed\n%s", fc.reclaims, out.String())
	}
}
