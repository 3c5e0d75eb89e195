package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/status"
	"github.com/runtasks/runtasks/internal/usage"
)

// statusNow is the clock of the status fixtures.
var statusNow = time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)

// statusFixture is a state directory with three sessions and a log of
// their decisions: s1 loops on bd-a (3 blocks), s2 finished bd-a after one,
// s3 (a run with --max-cycles 10) was blocked once on bd-b with only the
// ready count read. Each row shows its loop's own count and cap.
func statusFixture(t testing.TB) *state.Store {
	t.Helper()
	s := &state.Store{Dir: filepath.Join(t.TempDir(), ".runtasks")}
	full := func(ready, wip, blocked, remaining int) *state.Counts {
		return &state.Counts{Ready: ready, InProgress: wip, Blocked: blocked, Remaining: remaining}
	}
	readyOnly := &state.Counts{Ready: 2, InProgress: -1, Blocked: -1, Deferred: -1, Open: -1, Remaining: -1}
	recs := []state.Record{
		{Time: statusNow.Add(-3 * time.Hour), Session: "s2", Epic: "bd-a", Agent: "claude", Event: "Stop", Outcome: state.OutcomeContinue, Block: true, Cycle: 1, Max: 50, Why: "2 ready, 1 in progress", Counts: full(2, 1, 0, 4)},
		{Time: statusNow.Add(-2 * time.Hour), Session: "s2", Epic: "bd-a", Agent: "claude", Event: "Stop", Outcome: state.OutcomeComplete, Block: false, Cycle: 1, Max: 50, Why: "all tasks closed", Counts: full(0, 0, 0, 0)},
		{Time: statusNow.Add(-30 * time.Minute), Session: "s1", Epic: "bd-a", Agent: "claude", Event: "Stop", Outcome: state.OutcomeContinue, Block: true, Cycle: 1, Max: 50, Why: "3 ready", Counts: full(3, 0, 1, 5)},
		{Time: statusNow.Add(-20 * time.Minute), Session: "s1", Epic: "bd-a", Agent: "claude", Event: "Stop", Outcome: state.OutcomeRejected, Block: true, Cycle: 2, Max: 50, Why: "promise ALL TASKS COMPLETE rejected: 2 ready", Counts: full(2, 1, 1, 5)},
		{Time: statusNow.Add(-5 * time.Minute), Session: "s3", Epic: "bd-b", Agent: "codex", Event: "run", Outcome: state.OutcomeContinue, Block: true, Cycle: 1, Max: 10, Why: "2 ready", Counts: readyOnly},
		{Time: statusNow.Add(-45 * time.Second), Session: "s1", Epic: "bd-a", Agent: "claude", Event: "Stop", Outcome: state.OutcomeContinue, Block: true, Cycle: 3, Max: 50, Why: "1 ready, 2 in progress", Counts: full(1, 2, 1, 5)},
	}
	last := map[[2]string]state.Record{}
	// Usage: s1's stops on bd-a (priced, against its claimed tasks), s3's
	// on bd-b (a model without a price).
	priced := func(in, out, cr int64, cost float64) *usage.Spent {
		return &usage.Spent{Tokens: usage.Tokens{Input: in, Output: out, CacheRead: cr}, Cost: cost, Models: []string{"claude-sonnet-4-5"}}
	}
	recs[2].Usage, recs[2].Task = priced(1200, 300, 40000, 0.0201), "bd-a.1"
	recs[3].Usage, recs[3].Task = priced(800, 250, 52000, 0.0218), "bd-a.1"
	recs[5].Usage, recs[5].Task = priced(500, 120, 61000, 0.0216), "bd-a.2"
	recs[4].Usage = &usage.Spent{Tokens: usage.Tokens{Input: 90, Output: 40, CacheRead: 3000}, Unpriced: 3130, Models: []string{"fake-model"}}
	spent := map[[2]string]usage.Spent{}
	for _, r := range recs {
		if err := s.Append(r); err != nil {
			t.Fatal(err)
		}
		last[[2]string{r.Session, r.Epic}] = r
		// The state keeps s1's loop since it was armed: its last two stops.
		if k := [2]string{r.Session, r.Epic}; r.Usage != nil && r.Session == "s1" && r.Cycle >= 2 {
			spent[k] = spent[k].Plus(*r.Usage)
		}
	}
	for key, r := range last {
		r := r
		_, err := s.Update(key[0], key[1], func(st *state.State) error {
			st.Last, st.UpdatedAt, st.Spent = &r, r.Time, spent[key]
			if r.Block { // an ended loop's counters are cleared
				st.Cycles, st.FirstBlockAt = r.Cycle, statusNow.Add(-time.Hour)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func statusRun(t testing.TB, o *statusOptions) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	if o.Factory == nil {
		o.Factory = &Factory{Now: func() time.Time { return statusNow }}
	}
	o.Out = &out
	if o.Loc == nil {
		o.Loc = time.UTC
	}
	if o.Store.Warn == nil {
		o.Store.Warn = (&Factory{Err: &errOut}).warn
	}
	err := runStatus(context.Background(), o)
	return out.String(), errOut.String(), err
}

// statusGolden compares got with testdata/status/name.golden (-update
// rewrites it). The state directory's path is replaced by $STATE.
func statusGolden(t *testing.T, name, got, stateDir string) {
	t.Helper()
	got = strings.ReplaceAll(got, stateDir, "$STATE")
	path := filepath.Join("testdata", "status", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestStatusHuman(t *testing.T) {
	tests := []struct {
		name string
		opts statusOptions
	}{
		{"all", statusOptions{Options: status.Options{History: 10}}},
		{"epic", statusOptions{Options: status.Options{History: 10, Epic: "bd-a"}}},
		{"session", statusOptions{Options: status.Options{History: 2, Session: "s1"}}},
		{"no_history", statusOptions{Options: status.Options{History: 0}}},
		{"no_match", statusOptions{Options: status.Options{History: 10, Session: "nobody"}}},
		{"usage", statusOptions{Options: status.Options{History: 0, Usage: true}}},
		{"usage_epic", statusOptions{Options: status.Options{History: 0, Usage: true, Epic: "bd-a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := statusFixture(t)
			o := tt.opts
			o.Store = s
			out, errOut, err := statusRun(t, &o)
			if err != nil {
				t.Fatal(err)
			}
			if errOut != "" {
				t.Errorf("stderr: %s", errOut)
			}
			statusGolden(t, tt.name, out, s.Dir)
		})
	}
}

func TestStatusEmptyDir(t *testing.T) {
	s := &state.Store{Dir: filepath.Join(t.TempDir(), "none")}
	out, _, err := statusRun(t, &statusOptions{Options: status.Options{Store: s, History: 10}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No session state.", "No decisions logged."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Error("status created the state directory")
	}
}

// TestStatusHostileText: ids and reasons from outside cannot break the
// table or send escape sequences to the terminal.
func TestStatusHostileText(t *testing.T) {
	s := &state.Store{Dir: t.TempDir()}
	hostile := "evil\x1b[2J\ttab\nnewline" + strings.Repeat("x", 200)
	r := state.Record{Time: statusNow, Session: hostile, Epic: "bd-\x07", Outcome: state.OutcomeContinue, Block: true, Why: "why\r\nmore"}
	if err := s.Append(r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(hostile, "bd-\x07", func(st *state.State) error { st.Last = &r; return nil }); err != nil {
		t.Fatal(err)
	}
	out, _, err := statusRun(t, &statusOptions{Options: status.Options{Store: s, History: 10}})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\x07", "\r", "\t", "x" + strings.Repeat("x", 40)} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains %q:\n%s", bad, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 8 {
		t.Errorf("%d lines, want 8 (one row per record):\n%s", n, out)
	}
	// The raw ids survive in JSON.
	js, _, err := statusRun(t, &statusOptions{Options: status.Options{Store: s, History: 1}, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 || rep.Sessions[0].Session != hostile || rep.History[0].Session != hostile {
		t.Errorf("JSON lost the raw id: %+v", rep)
	}
}

func TestStatusJSON(t *testing.T) {
	s := statusFixture(t)
	out, _, err := statusRun(t, &statusOptions{Options: status.Options{Store: s, History: 5}, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"state_dir", "sessions", "history"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range rep.Sessions {
		order = append(order, s.Session)
		// Each loop's own count and cap, as its last decision gave them.
		want := map[string][2]int{"s1": {3, 50}, "s2": {1, 50}, "s3": {1, 10}}[s.Session]
		if s.Cycle != want[0] || s.MaxCycles != want[1] {
			t.Errorf("%s: cycle %d/%d, want %d/%d", s.Session, s.Cycle, s.MaxCycles, want[0], want[1])
		}
	}
	if got := strings.Join(order, ","); got != "s1,s3,s2" {
		t.Errorf("sessions %s, want s1,s3,s2 (newest first)", got)
	}
	if rep.Sessions[0].Cycles != 3 || rep.Sessions[0].Last == nil || rep.Sessions[0].Last.Counts.InProgress != 2 {
		t.Errorf("s1 = %+v", rep.Sessions[0])
	}
	if len(rep.History) != 5 || rep.History[4].Cycle != 3 || rep.History[0].Outcome != state.OutcomeComplete {
		t.Errorf("history = %+v", rep.History)
	}
	// Empty lists are [], not null.
	empty, _, _ := statusRun(t, &statusOptions{Options: status.Options{Store: &state.Store{Dir: t.TempDir()}}, JSON: true})
	if !strings.Contains(empty, `"sessions": []`) || !strings.Contains(empty, `"history": []`) {
		t.Errorf("empty JSON:\n%s", empty)
	}
}

func TestStatusJQ(t *testing.T) {
	tests := []struct {
		expr    string
		history int
		want    string
		wantErr string
	}{
		{expr: ".sessions[].session", want: "s1\ns3\ns2\n"},
		{expr: ".sessions | length", want: "3\n"},
		{expr: `.sessions[] | select(.cycles >= 2) | "\(.session) \(.cycles)/\(.max_cycles)"`, want: "s1 3/50\n"},
		{expr: ".history[-1].counts", history: 10, want: `{"blocked":1,"deferred":0,"in_progress":2,"open":0,"ready":1,"remaining":5}` + "\n"},
		{expr: "[.history[] | select(.block | not) | .why]", history: -1, want: `["all tasks closed"]` + "\n"},
		{expr: ".history | length", history: 0, want: "0\n"},
		{expr: ".sessions[0].last.block", want: "true\n"},
		{expr: ".nothing", want: "null\n"},
		{expr: "empty", want: ""},
		{expr: ".sessions[", wantErr: "--jq"},
		{expr: ".sessions.foo", wantErr: "--jq"},
		{expr: `error("custom")`, wantErr: "custom"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			s := statusFixture(t)
			out, _, err := statusRun(t, &statusOptions{Options: status.Options{Store: s, History: tt.history}, JQ: tt.expr})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.want {
				t.Errorf("output %q, want %q", out, tt.want)
			}
		})
	}
}

func TestStatusCorruptState(t *testing.T) {
	s := statusFixture(t)
	path, _ := s.StatePath("s3", "bd-b")
	if err := os.WriteFile(path, []byte("{oops"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not a record\n")
	f.Close()
	out, errOut, err := statusRun(t, &statusOptions{Options: status.Options{Store: s, History: 10}, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if len(rep.Sessions) != 2 || len(rep.History) != 6 {
		t.Errorf("%d sessions, %d records; want 2 and 6", len(rep.Sessions), len(rep.History))
	}
	if !strings.Contains(errOut, path) || !strings.Contains(errOut, "1 corrupt line") {
		t.Errorf("stderr does not report both problems:\n%s", errOut)
	}
}

func TestStatusCommand(t *testing.T) {
	project := t.TempDir()
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &state.Store{Dir: filepath.Join(project, ".runtasks")}
	// The loop's own cap (a run's --max-cycles 7), whatever status's
	// configuration says.
	if _, err := s.Update("s1", "bd-a", func(st *state.State) error {
		st.Cycles, st.Last = 4, &state.Record{Session: "s1", Epic: "bd-a", Outcome: state.OutcomeContinue, Block: true, Cycle: 4, Max: 7}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args     []string
		env      []string
		code     int
		want     string
		wantErr  string
		otherDir bool
	}{
		{args: []string{"status"}, want: "4/7"},
		{args: []string{"status", "--jq", ".sessions[0].cycles"}, want: "4\n"},
		{args: []string{"status", "-q", ".sessions[0].max_cycles"}, env: []string{"RUNTASKS_MAX_CYCLES=99"}, want: "7\n"},
		{args: []string{"status", "--json", "--epic", "bd-a"}, want: `"cycles": 4`},
		{args: []string{"status", "--jq", ".["}, code: 1, wantErr: "--jq"},
		{args: []string{"status", "--state-dir", "elsewhere", "--jq", ".sessions | length"}, want: "0\n"},
		{args: []string{"status", "extra"}, code: 4, wantErr: "unknown command"},
		{args: []string{"claim"}, code: 4, wantErr: "accepts 1 arg(s), received 0"},
		{args: []string{"config", "validate", "a", "b"}, code: 4, wantErr: "accepts at most 1 arg(s)"},
		{args: []string{"run", "extra"}, code: 4, wantErr: "agent arguments go after --"},
		{args: []string{"reset", "--session", "nobody"}, want: "Nothing to reset for session nobody.\n"},
		{args: []string{"reset", "--epic", "bd-a"}, want: "Cleared 1 session state(s) for epic bd-a:\n  s1  bd-a  4 cycle(s)\n"},
		{args: []string{"status", "--jq", ".history[0].outcome"}, want: "reset\n"},
		{args: []string{"status", "--jq", ".sessions | length"}, want: "0\n"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		f := &Factory{
			In: strings.NewReader(""), Out: &out, Err: &errOut,
			Environ: func() []string { return append([]string{"HOME=" + project}, tt.env...) },
			Getwd:   func() (string, error) { return project, nil },
			Now:     func() time.Time { return statusNow },
		}
		code := Main(tt.args, f)
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d; stderr: %s", tt.args, code, tt.code, errOut.String())
		}
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("%v: stdout %q lacks %q", tt.args, out.String(), tt.want)
		}
		if !strings.Contains(errOut.String(), tt.wantErr) {
			t.Errorf("%v: stderr %q lacks %q", tt.args, errOut.String(), tt.wantErr)
		}
	}
}

func TestStatusHelp(t *testing.T) {
	for _, cmd := range []string{"status", "reset"} {
		var out bytes.Buffer
		f := &Factory{Out: &out, Err: io.Discard, Environ: os.Environ, Getwd: os.Getwd, Now: time.Now}
		if code := Main([]string{cmd, "--help"}, f); code != 0 {
			t.Errorf("%s --help: exit %d", cmd, code)
		}
		if !strings.Contains(out.String(), "Examples:") || !strings.Contains(out.String(), "runtasks "+cmd) {
			t.Errorf("%s --help lacks examples:\n%s", cmd, out.String())
		}
	}
}

// BenchmarkStatus runs status over a log of 10,000 decisions from 50
// sessions: the default view reads the log from its end.
func BenchmarkStatus(b *testing.B) {
	s := &state.Store{Dir: b.TempDir()}
	f, err := os.Create(s.LogPath())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		r := state.Record{Time: statusNow.Add(time.Duration(i) * time.Second), Session: fmt.Sprintf("session-%02d", i%50),
			Epic: "bd-a", Outcome: state.OutcomeContinue, Block: true, Cycle: i / 50, Max: 50, Why: "2 ready, 1 in progress",
			Counts: &state.Counts{Ready: 2, InProgress: 1, Remaining: 5}}
		line, _ := json.Marshal(r)
		f.Write(append(line, '\n'))
	}
	f.Close()
	for i := range 50 {
		if _, err := s.Update(fmt.Sprintf("session-%02d", i), "bd-a", func(st *state.State) error { st.Cycles = 3; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		opts statusOptions
	}{
		{"table", statusOptions{Options: status.Options{History: 10}}},
		{"one_session", statusOptions{Options: status.Options{History: 10, Session: "session-07"}}},
		{"jq_all_history", statusOptions{Options: status.Options{History: -1}, JQ: ".history | length"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := bc.opts
			o.Store = s
			for b.Loop() {
				if _, _, err := statusRun(b, &o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestStatusWhy(t *testing.T) {
	s := statusFixture(t)
	reason := "completion rejected: 2 remain:\n- bd-a.1 Write the parser [open]\n\nYou are the orchestrator for beads epic bd-a.\n\nruntasks: cycle 3/50 · 1 ready"
	if _, err := s.Update("s1", "bd-a", func(st *state.State) error { st.LastReason = reason; return nil }); err != nil {
		t.Fatal(err)
	}
	out, _, err := statusRun(t, &statusOptions{Options: status.Options{Store: s}, Why: "s1"})
	if err != nil || out != reason+"\n" {
		t.Errorf("--why s1: %q, %v; want the whole reason", out, err)
	}
	for who, want := range map[string]string{
		"s2":     "runtasks has fed no reason back to session s2 (epic bd-a; its last decision: complete, all tasks closed)",
		"nobody": "no state for session nobody",
	} {
		if _, _, err := statusRun(t, &statusOptions{Options: status.Options{Store: s}, Why: who}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--why %s: %v, want %q", who, err, want)
		}
	}
}
