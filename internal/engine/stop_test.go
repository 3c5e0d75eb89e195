package engine

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

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// stopPorts serve a tracker to Stop at the test clock.
func stopPorts(tr Tracker) Ports { return Ports{Beads: tr, Now: func() time.Time { return now }} }

func TestStopEpicPrecedence(t *testing.T) {
	s := &state.Store{Dir: t.TempDir()}
	s.UpdateBinding("armed", func(b *state.Binding) error {
		b.Epic = "bd-bound"
		b.Claims = []state.ClaimedRun{{Task: "bd-t"}}
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
		dec, err := Stop(context.Background(), s, cfg, StopRequest{Input: Input{SessionID: tc.session}, EpicFromFlag: tc.flag}, stopPorts(tr))
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
	os.WriteFile(filepath.Join(run, state.ResultsFile), tmpl, 0o644)
	claim := state.ClaimedRun{Task: "bd-t", RunDir: run, ResultsSHA256: state.ResultsDigest(tmpl)}
	s := &state.Store{Dir: filepath.Join(dir, "state")}
	arm := func(at time.Time) {
		s.UpdateBinding("s1", func(b *state.Binding) error { b.AddClaim(claim); b.Epic = "bd-e"; b.ArmedAt = at; return nil })
	}
	arm(now.Add(-time.Hour))
	cfg := testConfig()
	cfg.Workflow.Epic = ""
	cfg.Workflow.StopHook.MaxCycles = 2
	stop := func(in Input) Decision {
		t.Helper()
		d, err := Stop(context.Background(), s, cfg, StopRequest{Input: in}, stopPorts(epic(nil)))
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
		if !d.Block || d.Outcome != state.OutcomeResultsMissing || !strings.Contains(d.Reason, filepath.Join(run, state.ResultsFile)) {
			t.Fatalf("block %d: %+v", i, d)
		}
	}
	if d := stop(in); d.Block || !strings.Contains(d.SystemMessage, "unwritten RESULTS.md") || d.Outcome != state.OutcomeComplete {
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
	if d, _ := Stop(context.Background(), s, &off, StopRequest{Input: in}, stopPorts(epic(nil))); d.Block || d.Outcome != state.OutcomeDisabled {
		t.Errorf("with the stop hook disabled: %+v", d)
	}
	// Written: allowed as complete.
	os.WriteFile(filepath.Join(run, state.ResultsFile), []byte("# Results\nLexer done; go test passes.\n"), 0o644)
	if d := stop(in); d.Block || d.Outcome != state.OutcomeComplete {
		t.Fatalf("written: %+v", d)
	}
	// A deleted RESULTS.md is unwritten too.
	os.Remove(filepath.Join(run, state.ResultsFile))
	if got := state.UntouchedResults([]state.ClaimedRun{claim}); len(got) != 1 {
		t.Errorf("missing RESULTS.md: %v", got)
	}
}

// Stop reads the stop's usage through Ports.Usage only for a driven
// session, from the mark the previous stop kept; a failed read is warned
// about, judged without usage, and keeps the mark.
func TestStopReadsUsageFromTheMark(t *testing.T) {
	s := &state.Store{Dir: t.TempDir()}
	var warned string
	s.Warn = func(m string) { warned = m }
	cfg := testConfig()
	cfg.Workflow.Epic = "bd-e"
	var froms []usage.UsageMark
	var fail error
	next := int64(0)
	p := stopPorts(epic([]string{"bd-e.1"}))
	p.Usage = func(from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
		froms = append(froms, from)
		if fail != nil {
			return usage.Usage{}, from, fail
		}
		next += 100
		return usage.Usage{Transcript: true, Entries: []usage.UsageEntry{{ID: fmt.Sprint("m", next), Model: "m", Tokens: usage.Tokens{Input: 1}}}},
			usage.UsageMark{Path: "/t.jsonl", Offset: next}, nil
	}
	stop := func(session string) Decision {
		t.Helper()
		d, err := Stop(context.Background(), s, cfg, StopRequest{Input: Input{SessionID: session, Event: "Stop"}}, p)
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
	want := []usage.UsageMark{{}, {Path: "/t.jsonl", Offset: 100}, {Path: "/t.jsonl", Offset: 200}, {Path: "/t.jsonl", Offset: 200}}
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
	if d := stop("s2"); d.Outcome != state.OutcomeNotDriven || len(froms) != 0 {
		t.Errorf("undriven: %s, %d reads", d.Outcome, len(froms))
	}
}

// A session armed for another epic and then for this one again does not
// read on from this loop's old mark (it would count the other loop's
// turns): it reads back to its previous stop.
func TestStopUsageMarkNotAcrossArming(t *testing.T) {
	s := &state.Store{Dir: t.TempDir()}
	cfg := testConfig()
	cfg.Workflow.Epic = ""
	clock := now
	p := Ports{Beads: epic([]string{"x.1"}), Now: func() time.Time { return clock }}
	var froms []usage.UsageMark
	p.Usage = func(from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
		froms = append(froms, from)
		return usage.Usage{Transcript: true}, usage.UsageMark{Path: "/t", Offset: int64(100 * len(froms))}, nil
	}
	arm := func(e string) {
		s.UpdateBinding("s1", func(b *state.Binding) error { b.Epic, b.ArmedAt = e, clock; return nil })
	}
	stop := func() {
		t.Helper()
		clock = clock.Add(time.Minute)
		if _, err := Stop(context.Background(), s, cfg, StopRequest{Input: Input{SessionID: "s1", Event: "Stop"}}, p); err != nil {
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
	want := []usage.UsageMark{{}, {Path: "/t", Offset: 100}, {}, {}, {Path: "/t", Offset: 400}}
	if !slices.Equal(froms, want) {
		t.Errorf("reads from %+v, want %+v", froms, want)
	}
}

// TestStopDuplicateHooks: two runtasks stop hooks that fire for one stop
// (a project and a user install) decide it once: the second, which began
// before the first one's decision was recorded or finds the transcript as
// it was, answers nothing and is not counted; the next real stop (the
// transcript grew) is counted again.
func TestStopDuplicateHooks(t *testing.T) {
	dir := t.TempDir()
	s := &state.Store{Dir: filepath.Join(dir, "state")}
	transcript := filepath.Join(dir, "t.jsonl")
	os.WriteFile(transcript, []byte(`{"type":"assistant"}`+"\n"), 0o644)
	cfg := testConfig()
	clock := now
	tick := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	ports := Ports{Beads: epic([]string{"x.1"}), Now: tick}
	stop := func(in Input) Decision {
		t.Helper()
		d, err := Stop(context.Background(), s, cfg, StopRequest{Input: in}, ports)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	in := Input{SessionID: "s1", Event: "Stop", TranscriptPath: transcript, FinalMessage: "Pausing here."}
	first := stop(in)
	if !first.Block || first.Cycle != 1 {
		t.Fatalf("first hook: %+v", first)
	}
	// The second hook of the same stop: the transcript as it was.
	second := stop(in)
	if second.Outcome != state.OutcomeDuplicate || second.Block || second.SystemMessage != "" || second.Reason != "" {
		t.Errorf("second hook of the same stop: %+v, want an empty answer", second)
	}
	// The next stop: the agent was fed the reason and answered again.
	os.WriteFile(transcript, []byte(`{"type":"assistant"}`+"\n"+`{"type":"user"}`+"\n"), 0o644)
	if d := stop(in); !d.Block || d.Cycle != 2 {
		t.Errorf("the next stop: %+v, want cycle 2", d)
	}
	// Without a transcript (Cursor), the timing says it: a hook that began
	// before the other one's decision was recorded is the same stop.
	noTranscript := Input{SessionID: "s2", Event: "stop"}
	stop(noTranscript)
	st, _ := s.Get("s2", "bd-e")
	if !duplicate(st.LastStop, stopMark(noTranscript), st.LastStop.DecidedAt.Add(-time.Millisecond)) {
		t.Error("a hook that began before the decision was recorded is not the same stop")
	}
	if d := stop(noTranscript); d.Outcome == state.OutcomeDuplicate || d.Cycle != 2 {
		t.Errorf("a stop that began after the decision: %+v, want counted", d)
	}
	recs, err := s.Records(state.RecordFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Outcome == state.OutcomeDuplicate {
			t.Errorf("a duplicate was logged as a decision: %+v", r)
		}
	}
}

type panicking struct{ Tracker }

func (panicking) Ready(context.Context, string) ([]beads.Issue, error) { panic("boom") }

// A stop that panics (the hook recovers it) decided nothing: nobody is
// notified of an empty decision.
func TestStopPanicNotifiesNobody(t *testing.T) {
	cfg := testConfig()
	cfg.Workflow.Epic = "bd-e"
	p := stopPorts(panicking{})
	notified := 0
	p.Notify = func(Input, Decision) { notified++ }
	func() {
		defer func() { _ = recover() }()
		Stop(context.Background(), &state.Store{Dir: t.TempDir()}, cfg, StopRequest{Input: Input{SessionID: "s1", Event: "Stop"}}, p)
	}()
	if notified != 0 {
		t.Errorf("notified %d times of a stop that panicked", notified)
	}
}
