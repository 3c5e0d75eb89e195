package claim

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/beads/beadstest"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
)

var update = flag.Bool("update", false, "rewrite golden files")

type fixture struct {
	s                *beadstest.Store
	bd               *beads.Client
	goal, plan, task string
	closed           string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	s := beadstest.NewStore(t, "cl")
	f := fixture{s: s, bd: &beads.Client{Bin: s.Bin, WorkDir: s.Root, Env: s.Env}}
	f.goal = s.Create("Ship the parser", "--type", "epic", "-d", "Users can parse config files.")
	f.plan = s.Create("Parser plan", "--type", "epic", "--parent", f.goal, "-d", "Lexer, then parser.", "--design", "Hand-written recursive descent.")
	f.task = s.Create("Write the lexer", "--parent", f.plan, "-d", "Tokenise the input.",
		"--acceptance", "- tokens for every keyword\n- errors carry line numbers", "--design", "One pass, no regexps.")
	f.closed = s.Create("Old task", "--parent", f.plan)
	s.Close(f.closed)
	return f
}

func (f fixture) request(t *testing.T, session string) Request {
	return Request{
		Task: f.task, Session: session, Actor: Actor("tester", nil, session),
		Root: f.s.Root, RunsDir: "runs", Now: time.Date(2026, 11, 22, 18, 30, 5, 0, time.UTC),
		Store: &state.Store{Dir: filepath.Join(f.s.Root, ".runtasks")},
	}
}

// Two sessions claim one task at the same moment: exactly one wins, the
// other is told who holds it, and only one run folder exists.
func TestIntegrationConcurrentClaims(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]error, 2)
	for i, session := range []string{"sess-a", "sess-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = Claim(ctx, f.bd, f.request(t, session))
		}()
	}
	wg.Wait()
	wins, held := 0, 0
	for _, err := range results {
		var h *HeldError
		switch {
		case err == nil:
			wins++
		case errors.As(err, &h):
			held++
			if !strings.HasPrefix(h.Holder, "tester@sess-") || h.Since.IsZero() {
				t.Errorf("held error names %q since %v", h.Holder, h.Since)
			}
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 || held != 1 {
		t.Fatalf("wins=%d held=%d (errors %v)", wins, held, results)
	}
	runs, _ := filepath.Glob(filepath.Join(f.s.Root, "runs", "run-*"))
	if len(runs) != 1 {
		t.Errorf("run folders: %v", runs)
	}
	is, err := f.bd.Show(ctx, f.task)
	if err != nil {
		t.Fatal(err)
	}
	if is.Status != beads.StatusInProgress || !strings.HasPrefix(is.Assignee, "tester@sess-") {
		t.Errorf("task in beads: status %s assignee %s", is.Status, is.Assignee)
	}
}

func TestIntegrationClaimHierarchyRunFolderAndContext(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	req := f.request(t, "sess-1")
	res, err := Claim(ctx, f.bd, req)
	if err != nil {
		t.Fatal(err)
	}
	// Hierarchy: task, plan (parent), goal (grandparent).
	if res.Task.ID != f.task || res.Plan() == nil || res.Plan().ID != f.plan || res.Goal() == nil || res.Goal().ID != f.goal {
		t.Fatalf("hierarchy: %+v", res)
	}
	if res.Plan().Design != "Hand-written recursive descent." || res.Task.AcceptanceCriteria == "" || res.Goal().Description != "Users can parse config files." {
		t.Errorf("hierarchy fields: %+v", res)
	}
	// The claim records the session in beads.
	is, _ := f.bd.Show(ctx, f.task)
	if is.Assignee != "tester@sess-1" || is.Status != beads.StatusInProgress {
		t.Errorf("beads: %s %s", is.Status, is.Assignee)
	}
	// Run folder.
	wantDir := filepath.Join(f.s.Root, "runs", "run-20261122-183005-"+f.task)
	if res.RunDir != wantDir || res.RunID != filepath.Base(wantDir) {
		t.Errorf("run dir %s, want %s", res.RunDir, wantDir)
	}
	for _, name := range []string{"THOUGHTS.md", "DECISIONS.md", "ASSUMPTIONS.md", "LEARNINGS.md", "RESULTS.md", "timeline.yaml", "metadata.yaml"} {
		if _, err := os.Stat(filepath.Join(wantDir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	thoughts, _ := os.ReadFile(filepath.Join(wantDir, "THOUGHTS.md"))
	for _, want := range []string{"## Goal: " + f.goal + " — Ship the parser", "## Plan: " + f.plan, "Hand-written recursive descent.",
		"- [ ] tokens for every keyword", "- [ ] errors carry line numbers", "One pass, no regexps."} {
		if !strings.Contains(string(thoughts), want) {
			t.Errorf("THOUGHTS.md lacks %q:\n%s", want, thoughts)
		}
	}
	meta, _ := os.ReadFile(filepath.Join(wantDir, "metadata.yaml"))
	for _, want := range []string{`task: "` + f.task + `"`, `session: "sess-1"`, `claimed_at: "2026-11-22T18:30:05Z"`, `run_id: "` + res.RunID + `"`} {
		if !strings.Contains(string(meta), want) {
			t.Errorf("metadata.yaml lacks %q:\n%s", want, meta)
		}
	}
	// The binding records the claim with RESULTS.md's template digest.
	b, err := req.Store.Binding("sess-1")
	if err != nil || len(b.Claims) != 1 || b.Claims[0].RunDir != wantDir {
		t.Fatalf("binding %+v %v", b, err)
	}
	if got := state.UntouchedResults(b.Claims); len(got) != 1 {
		t.Errorf("fresh RESULTS.md not seen as untouched: %v", got)
	}
	os.WriteFile(filepath.Join(wantDir, "RESULTS.md"), []byte("# Results\nLexer done, tests pass.\n"), 0o644)
	if got := state.UntouchedResults(b.Claims); len(got) != 0 {
		t.Errorf("written RESULTS.md seen as untouched: %v", got)
	}

	// The injected JSON, per agent protocol (golden; ids normalised).
	text := res.Text()
	norm := strings.NewReplacer(f.task, "cl-T.1.1", f.plan, "cl-T.1", f.goal, "cl-T").Replace(text)
	norm = regexp.MustCompile(`cl-[a-z0-9]+`).ReplaceAllString(norm, "cl-ID")
	for _, agent := range []string{hook.Claude, hook.Codex} {
		golden(t, "context-"+agent+".golden", hook.EncodeContextMessage(agent, hook.EventPromptSubmit, norm, ""))
	}

	// Claiming again in the same session reuses the run folder.
	again, err := Claim(ctx, f.bd, req)
	if err != nil || !again.Again || again.RunDir != wantDir {
		t.Errorf("re-claim: %+v %v", again, err)
	}
	// Another session is refused, nothing stolen.
	_, err = Claim(ctx, f.bd, f.request(t, "sess-2"))
	var held *HeldError
	if !errors.As(err, &held) || held.Holder != "tester@sess-1" {
		t.Errorf("other session: %v", err)
	}
	if !strings.Contains(FailureText(f.task, err), "already claimed by tester@sess-1 since ") {
		t.Errorf("failure text: %s", FailureText(f.task, err))
	}
}

func TestIntegrationClaimUnknownAndClosed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.request(t, "s")
	r.Task = "cl-nope"
	if _, err := Claim(ctx, f.bd, r); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown id: %v", err)
	}
	r.Task = f.closed
	if _, err := Claim(ctx, f.bd, r); !errors.Is(err, ErrClosed) {
		t.Errorf("closed task: %v", err)
	}
	// An epic is driven, never claimed: beads keeps it open and unassigned.
	r.Task = f.plan
	_, err := Claim(ctx, f.bd, r)
	if !errors.Is(err, ErrEpic) || FailureText(f.plan, err) != "runtasks: nothing claimed: "+f.plan+" is an epic: /run-tasks "+f.plan+" drives it." {
		t.Errorf("epic: %v; text %q", err, FailureText(f.plan, err))
	}
	if is, err := f.bd.Show(ctx, f.plan); err != nil || is.Status != beads.StatusOpen || is.Assignee != "" {
		t.Errorf("the epic in beads after the refused claim: %+v, %v", is, err)
	}
	if _, err := os.Stat(filepath.Join(f.s.Root, "runs")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(f.s.Root, "runs"))
		if len(entries) > 0 {
			t.Errorf("run folders created: %v", entries)
		}
	}
	if b, _ := r.Store.Binding("s"); !b.Empty() {
		t.Errorf("binding recorded: %+v", b)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n got %s\nwant %s", name, got, want)
	}
}

// TestIntegrationArm: arming asks beads first; an unknown id and a closed
// issue arm nothing, and arming again keeps the first ArmedAt.
func TestIntegrationArm(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	store := &state.Store{Dir: filepath.Join(f.s.Root, ".runtasks")}
	done := f.s.Create("Old epic", "--type", "epic")
	f.s.Close(done)
	t0 := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		epic string
		want error
	}{{"cl-nope", ErrUnknown}, {done, ErrClosed}} {
		if _, _, err := Arm(ctx, f.bd, store, "s", tc.epic, t0); !errors.Is(err, tc.want) {
			t.Errorf("Arm(%s) = %v, want %v", tc.epic, err, tc.want)
		}
		if b, _ := store.Binding("s"); !b.Empty() {
			t.Errorf("Arm(%s) recorded %+v", tc.epic, b)
		}
	}
	is, b, err := Arm(ctx, f.bd, store, "s", f.goal, t0)
	if err != nil || is.ID != f.goal || b.Epic != f.goal || !b.ArmedAt.Equal(t0) {
		t.Fatalf("Arm = %+v, %+v, %v", is, b, err)
	}
	if _, b, _ = Arm(ctx, f.bd, store, "s", f.goal, t0.Add(time.Hour)); !b.ArmedAt.Equal(t0) {
		t.Errorf("armed again: ArmedAt %v, want %v", b.ArmedAt, t0)
	}
}

// The actor of a session is its base actor and the session; a BEADS_ACTOR
// that already names this session (as the session hook exports it into
// the agent's shell) is kept as it is, and another session's is extended.
func TestActor(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "BEADS_ACTOR" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct{ base, beadsActor, session, want string }{
		{"", "alice", "s1", "alice@s1"},
		{"", "alice@s1", "s1", "alice@s1"},
		{"", "alice@s2", "s1", "alice@s2@s1"},
		{"bob", "alice@s1", "s1", "bob@s1"},
		{"", "", "a/b", "runtasks@a_b"},
	} {
		if got := Actor(tc.base, env(tc.beadsActor), tc.session); got != tc.want {
			t.Errorf("Actor(%q, BEADS_ACTOR=%q, %q) = %q, want %q", tc.base, tc.beadsActor, tc.session, got, tc.want)
		}
	}
}
