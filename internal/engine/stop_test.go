package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBindingPathStaysInside(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	for _, id := range []string{"../../etc/passwd", "/abs", "a/b", "..", "x\x00y", strings.Repeat("z", 5000), "ok-1"} {
		p, err := s.BindingPath(id)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(p) != filepath.Join(s.Dir, bindingsDir) {
			t.Errorf("%q -> %s escapes the bindings dir", id, p)
		}
	}
	a, _ := s.BindingPath("a/b")
	b, _ := s.BindingPath("a_b")
	if a == b {
		t.Error("distinct sessions share a binding file")
	}
	if _, err := s.BindingPath(""); err != ErrNoSession {
		t.Errorf("empty session: %v", err)
	}
}

func TestBindingUpdateListRemove(t *testing.T) {
	s := &Store{Dir: t.TempDir(), Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	if b, err := s.Binding("s1"); err != nil || !b.Empty() || b.Session != "s1" {
		t.Fatalf("unbound: %+v %v", b, err)
	}
	if _, err := s.UpdateBinding("s1", func(b *Binding) error { b.Epic = "bd-e"; return nil }); err != nil {
		t.Fatal(err)
	}
	s.UpdateBinding("../s2", func(b *Binding) error {
		b.AddClaim(ClaimedRun{Task: "bd-t", RunDir: "/r1"})
		b.AddClaim(ClaimedRun{Task: "bd-t", RunDir: "/r2"}) // replaces
		return nil
	})
	all, err := s.Bindings()
	if err != nil || len(all) != 2 {
		t.Fatalf("bindings %+v %v", all, err)
	}
	b, _ := s.Binding("../s2")
	if len(b.Claims) != 1 || b.Claims[0].RunDir != "/r2" {
		t.Errorf("claims %+v", b.Claims)
	}
	// Emptied: the file goes.
	s.UpdateBinding("s1", func(b *Binding) error { b.Epic = ""; return nil })
	if p, _ := s.BindingPath("s1"); fileExists(p) {
		t.Error("empty binding kept")
	}
	// Corrupt: read as unbound, replaced at the next update.
	p, _ := s.BindingPath("s3")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("{not json"), 0o644)
	var warned string
	s.Warn = func(m string) { warned = m }
	if b, err := s.Binding("s3"); err != nil || !b.Empty() || warned == "" {
		t.Errorf("corrupt: %+v %v warn %q", b, err, warned)
	}
	if b, err := s.UpdateBinding("s3", func(b *Binding) error { b.Epic = "e"; return nil }); err != nil || b.Epic != "e" {
		t.Errorf("replace corrupt: %+v %v", b, err)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// stopPorts serve a tracker to Stop at the test clock.
func stopPorts(tr Tracker) Ports { return Ports{Beads: tr, Now: func() time.Time { return now }} }

func TestStopEpicPrecedence(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	s.UpdateBinding("armed", func(b *Binding) error {
		b.Epic = "bd-bound"
		b.Claims = []ClaimedRun{{Task: "bd-t"}}
		return nil
	})
	for _, tc := range []struct {
		session, static string
		flag            bool
		want            string
	}{
		{"armed", "bd-static", false, "bd-bound"}, // binding > env/file
		{"armed", "bd-flag", true, "bd-flag"},     // flag > binding
		{"other", "bd-static", false, "bd-static"},
		{"other", "", false, ""}, // unbound, no static epic: untouched
		{"", "", false, ""},
	} {
		cfg := testConfig()
		cfg.Workflow.Epic = tc.static
		tr := epic([]string{"x.1"})
		dec, err := s.Stop(context.Background(), cfg, StopRequest{Input: Input{SessionID: tc.session}, EpicFromFlag: tc.flag}, stopPorts(tr))
		if err != nil || dec.Epic != tc.want {
			t.Errorf("%+v: epic %q err %v", tc, dec.Epic, err)
		}
		if cfg.Workflow.Epic != tc.static {
			t.Errorf("%+v: the configuration was changed to %q", tc, cfg.Workflow.Epic)
		}
		if (tc.want != "") != dec.Block {
			t.Errorf("%+v: block %v (%s)", tc, dec.Block, dec.Why)
		}
	}
}

func TestStopResults(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run-1")
	os.MkdirAll(run, 0o755)
	tmpl := []byte("# Results\n<!-- template -->\n")
	os.WriteFile(filepath.Join(run, ResultsFile), tmpl, 0o644)
	claim := ClaimedRun{Task: "bd-t", RunDir: run, ResultsSHA256: ResultsDigest(tmpl)}
	s := &Store{Dir: filepath.Join(dir, "state")}
	arm := func(at time.Time) {
		s.UpdateBinding("s1", func(b *Binding) error { b.AddClaim(claim); b.Epic = "bd-e"; b.ArmedAt = at; return nil })
	}
	arm(now.Add(-time.Hour))
	cfg := testConfig()
	cfg.Workflow.Epic = ""
	cfg.Workflow.StopHook.MaxCycles = 2
	stop := func(in Input) Decision {
		t.Helper()
		d, err := s.Stop(context.Background(), cfg, StopRequest{Input: in}, stopPorts(epic(nil)))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	in := Input{SessionID: "s1", Event: "Stop"}
	// The epic is complete; RESULTS.md is untouched: blocked twice, then the
	// cap allows the stop with a message.
	for i := 0; i < 2; i++ {
		d := stop(in)
		if !d.Block || d.Outcome != OutcomeResultsMissing || !strings.Contains(d.Reason, filepath.Join(run, ResultsFile)) {
			t.Fatalf("block %d: %+v", i, d)
		}
	}
	if d := stop(in); d.Block || !strings.Contains(d.SystemMessage, "unwritten RESULTS.md") || d.Outcome != OutcomeComplete {
		t.Fatalf("at cap: %+v", d)
	}
	// The loop ended with the completion: released, not driven any more.
	if b, _ := s.Binding("s1"); b.Epic != "" || len(b.Claims) != 1 {
		t.Errorf("binding after completion: %+v", b)
	}
	// Armed again after the loop ended: driven afresh. Subagent stops and
	// a disabled hook are never blocked for results.
	arm(now.Add(time.Minute))
	sub := in
	sub.Subagent = true
	if d := stop(sub); d.Block {
		t.Error("subagent stop blocked")
	}
	off := *cfg
	off.Workflow.StopHook.Enabled = false
	if d, _ := s.Stop(context.Background(), &off, StopRequest{Input: in}, stopPorts(epic(nil))); d.Block {
		t.Error("blocked with the stop hook disabled")
	}
	// Written: allowed as complete.
	os.WriteFile(filepath.Join(run, ResultsFile), []byte("# Results\nLexer done; go test passes.\n"), 0o644)
	if d := stop(in); d.Block || d.Outcome != OutcomeComplete {
		t.Fatalf("written: %+v", d)
	}
	// A deleted RESULTS.md is unwritten too.
	os.Remove(filepath.Join(run, ResultsFile))
	if got := UntouchedResults([]ClaimedRun{claim}); len(got) != 1 {
		t.Errorf("missing RESULTS.md: %v", got)
	}
}

// Stop reads the stop's usage through Ports.Usage only for a driven
// session, from the mark the previous stop kept; a failed read is warned
// about, judged without usage, and keeps the mark.
func TestStopReadsUsageFromTheMark(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	var warned string
	s.Warn = func(m string) { warned = m }
	cfg := testConfig()
	cfg.Workflow.Epic = "bd-e"
	var froms []UsageMark
	var fail error
	next := int64(0)
	p := stopPorts(epic([]string{"bd-e.1"}))
	p.Usage = func(from UsageMark) (Usage, UsageMark, error) {
		froms = append(froms, from)
		if fail != nil {
			return Usage{}, from, fail
		}
		next += 100
		return Usage{Transcript: true, Entries: []UsageEntry{{ID: fmt.Sprint("m", next), Model: "m", Tokens: Tokens{Input: 1}}}},
			UsageMark{Path: "/t.jsonl", Offset: next}, nil
	}
	stop := func(session string) Decision {
		t.Helper()
		d, err := s.Stop(context.Background(), cfg, StopRequest{Input: Input{SessionID: session, Event: "Stop"}}, p)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	stop("s1")
	stop("s1")
	fail = errors.New("boom")
	stop("s1")
	fail = nil
	d := stop("s1")
	want := []UsageMark{{}, {Path: "/t.jsonl", Offset: 100}, {Path: "/t.jsonl", Offset: 200}, {Path: "/t.jsonl", Offset: 200}}
	if !slices.Equal(froms, want) {
		t.Errorf("reads from %+v, want %+v", froms, want)
	}
	if !strings.Contains(warned, "boom") {
		t.Errorf("the failed read was not warned about: %q", warned)
	}
	if d.Usage == nil || d.Usage.Input != 1 {
		t.Errorf("the last stop's usage: %+v", d.Usage)
	}
	if st, _ := s.Get("s1", "bd-e"); st.Spent.Input != 3 || st.UsageMark == nil || st.UsageMark.Offset != 300 {
		t.Errorf("state: spent %+v, mark %+v; want 3 tokens and the mark at 300", st.Spent, st.UsageMark)
	}
	// A session nobody drives is not read at all.
	cfg.Workflow.Epic = ""
	froms = nil
	if d := stop("s2"); d.Outcome != OutcomeNotDriven || len(froms) != 0 {
		t.Errorf("undriven: %s, %d reads", d.Outcome, len(froms))
	}
}

// A session armed for another epic and then for this one again does not
// read on from this loop's old mark (it would count the other loop's
// turns): it reads back to its previous stop.
func TestStopUsageMarkNotAcrossArming(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	cfg := testConfig()
	cfg.Workflow.Epic = ""
	clock := now
	p := Ports{Beads: epic([]string{"x.1"}), Now: func() time.Time { return clock }}
	var froms []UsageMark
	p.Usage = func(from UsageMark) (Usage, UsageMark, error) {
		froms = append(froms, from)
		return Usage{Transcript: true}, UsageMark{Path: "/t", Offset: int64(100 * len(froms))}, nil
	}
	arm := func(e string) {
		s.UpdateBinding("s1", func(b *Binding) error { b.Epic, b.ArmedAt = e, clock; return nil })
	}
	stop := func() {
		t.Helper()
		clock = clock.Add(time.Minute)
		if _, err := s.Stop(context.Background(), cfg, StopRequest{Input: Input{SessionID: "s1", Event: "Stop"}}, p); err != nil {
			t.Fatal(err)
		}
	}
	arm("bd-a")
	stop() // bd-a's loop: backwards
	stop() // bd-a again: on from its mark (100)
	clock = clock.Add(time.Minute)
	arm("bd-b")
	stop() // bd-b's loop: backwards
	clock = clock.Add(time.Minute)
	arm("bd-a")
	stop() // bd-a armed again: backwards, not from its old mark (200)
	stop() // then on from the new mark
	want := []UsageMark{{}, {Path: "/t", Offset: 100}, {}, {}, {Path: "/t", Offset: 400}}
	if !slices.Equal(froms, want) {
		t.Errorf("reads from %+v, want %+v", froms, want)
	}
}
