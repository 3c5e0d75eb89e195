package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/shell"
	"github.com/runtasks/runtasks/internal/state"
)

type fakeRunner struct {
	res   shell.Result
	err   error
	calls []string
}

func (f *fakeRunner) Run(_ context.Context, dir, command string, timeout time.Duration) (shell.Result, error) {
	f.calls = append(f.calls, dir+"|"+command+"|"+timeout.String())
	return f.res, f.err
}

// cfgCheckSpecs decodes workflow.checks items as Load does (from a
// project.yaml written as JSON, which YAML reads).
func cfgCheckSpecs(t *testing.T, items ...any) []config.CheckSpec {
	t.Helper()
	data, err := json.Marshal(map[string]any{"workflow": map[string]any{"checks": items}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), config.ProjectFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(config.LoadOptions{ConfigFile: path})
	if err != nil {
		t.Fatalf("checks %v: %v", items, err)
	}
	return cfg.Workflow.Checks
}

func TestReadPlan(t *testing.T) {
	for _, tt := range []struct {
		file  string
		found bool
		want  string
	}{
		{"claude.jsonl", true, "Write parser=completed Test parser=in_progress"},
		{"codex.jsonl", true, "Read code=completed Fix bug=completed"},
		{"codex-exec.jsonl", true, "Plan=completed Ship=pending"},
	} {
		items, found, err := ReadPlan(filepath.Join("testdata", "plan", tt.file))
		if err != nil || found != tt.found {
			t.Fatalf("%s: found %v err %v", tt.file, found, err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Text+"="+it.Status)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: %v, want %s", tt.file, got, tt.want)
		}
	}
	noplan := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(noplan, []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"TodoWrite is a tool"}]}}`+"\n"), 0o644)
	if _, found, err := ReadPlan(noplan); found || err != nil {
		t.Errorf("prose mention: found %v err %v", found, err)
	}
	if _, _, err := ReadPlan(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing transcript: want an error")
	}
}

func TestCheckers(t *testing.T) {
	dir := t.TempDir()
	template := "# Results\n\n(to be written)\n"
	for name, content := range map[string]string{
		"tmpl.md": template, "same.md": template,
		"done.md": "# Results\n\nAll good.\n", "empty.md": "  \n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(f string) string { p, _ := filepath.Abs(filepath.Join("testdata", "plan", f)); return p }
	pass := &fakeRunner{res: shell.Result{ExitCode: 0}}
	fail := &fakeRunner{res: shell.Result{ExitCode: 1, Output: []byte("line1\nline2\nline3\n--- FAIL: TestX\nFAIL\n")}}
	timeout := &fakeRunner{res: shell.Result{ExitCode: -1, TimedOut: true, Output: []byte("still running")}}
	broken := &fakeRunner{err: errors.New("exec: sh: not found")}

	tests := []struct {
		name     string
		spec     any
		msg      string // final message
		session  string
		runner   func(context.Context, string, string, time.Duration) (shell.Result, error)
		tr       *fakeTracker
		status   string
		feedback string // substring of the joined feedback
	}{
		{name: "beads complete", spec: "beads", tr: epic(nil), status: VerdictComplete},
		{name: "beads work left", spec: "beads", tr: epic([]string{"e.1"}), status: VerdictIncomplete, feedback: "e.1 Task e.1 [open]"},
		{name: "beads only blocked", spec: "beads", tr: epic(nil, issue("e.2", "blocked")), status: VerdictIncomplete, feedback: "e.2 Task e.2 [blocked] needs a person"},
		{name: "beads error", spec: "beads", tr: &fakeTracker{err: errors.New("bd broke")}, status: VerdictError},
		{name: "promise made", spec: "promise", msg: "ok\n<promise>ALL TASKS COMPLETE</promise>", status: VerdictComplete},
		{name: "promise missing", spec: "promise", msg: "I am done", status: VerdictIncomplete, feedback: "<promise>ALL TASKS COMPLETE</promise>"},
		{name: "promise custom text", spec: map[string]any{"type": "promise", "texts": []any{"SHIPPED"}}, msg: "<promise>SHIPPED</promise>", status: VerdictComplete},
		{name: "promise no message", spec: "promise", status: VerdictSkipped},
		{name: "done token", spec: "done_token", session: "s1", msg: "TASKMASTER_DONE::s1", status: VerdictComplete},
		{name: "done token other session", spec: "done_token", session: "s1", msg: "TASKMASTER_DONE::s2", status: VerdictIncomplete},
		{name: "command passes", spec: map[string]any{"type": "command", "run": "go test ./..."}, runner: pass.Run, status: VerdictComplete},
		{name: "command fails with tail", spec: map[string]any{"type": "command", "run": "go test ./...", "tail_lines": 2}, runner: fail.Run, status: VerdictIncomplete, feedback: "failed (exit 1); the end of its output:\n--- FAIL: TestX\nFAIL"},
		{name: "command times out", spec: map[string]any{"type": "command", "run": "sleep 9", "timeout": "1s"}, runner: timeout.Run, status: VerdictIncomplete, feedback: "timed out after 1s"},
		{name: "command cannot run", spec: map[string]any{"type": "command", "run": "x"}, runner: broken.Run, status: VerdictError},
		{name: "files ok", spec: map[string]any{"type": "files", "paths": []any{"done.md"}, "non_empty": true, "template": "tmpl.md"}, status: VerdictComplete},
		{name: "files missing", spec: map[string]any{"type": "files", "paths": []any{"nope.md", "done.md"}}, status: VerdictIncomplete, feedback: "nope.md is missing"},
		{name: "files empty", spec: map[string]any{"type": "files", "paths": []any{"empty.md"}, "non_empty": true}, status: VerdictIncomplete, feedback: "empty.md is empty"},
		{name: "files unchanged from template", spec: map[string]any{"type": "files", "paths": []any{"same.md"}, "template": "tmpl.md"}, status: VerdictIncomplete, feedback: "same.md is unchanged from tmpl.md"},
		{name: "plan open items", spec: "plan", msg: plan("claude.jsonl"), status: VerdictIncomplete, feedback: "Test parser [in_progress]"},
		{name: "plan all done", spec: "plan", msg: plan("codex.jsonl"), status: VerdictComplete},
		{name: "plan absent", spec: "plan", msg: "", status: VerdictSkipped},
		{name: "plan required", spec: map[string]any{"type": "plan", "required": true}, msg: "", status: VerdictIncomplete},
		{name: "composite any", spec: map[string]any{"type": "composite", "mode": "any", "checks": []any{"promise", map[string]any{"type": "files", "paths": []any{"done.md"}}}}, msg: "no promise", status: VerdictComplete},
		{name: "composite all nested", spec: map[string]any{"type": "composite", "checks": []any{
			map[string]any{"type": "files", "paths": []any{"done.md"}},
			map[string]any{"type": "composite", "mode": "any", "checks": []any{"promise", map[string]any{"type": "files", "paths": []any{"nope.md"}}}}}},
			msg: "no promise", status: VerdictIncomplete, feedback: "nope.md is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Workflow.Checks = cfgCheckSpecs(t, tt.spec)
			cfg.Root = dir
			in := Input{SessionID: tt.session, FinalMessage: tt.msg}
			if strings.HasSuffix(tt.msg, ".jsonl") {
				in = Input{TranscriptPath: tt.msg}
			}
			in.Epic = cfg.Workflow.Epic
			tr := tt.tr
			if tr == nil {
				tr = epic(nil)
			}
			d := &decider{in: in, cfg: cfg, env: Env{Ports: Ports{Beads: tr, Runner: tt.runner}, Now: time.Now()}}
			vs, status := runChecks(context.Background(), cfg.Workflow.Checks, d)
			if status != tt.status || len(vs) != 1 {
				t.Fatalf("status %s (%+v), want %s", status, vs, tt.status)
			}
			fb := strings.Join(allFeedback(vs[0]), "\n")
			if tt.feedback != "" && !strings.Contains(fb, tt.feedback) {
				t.Errorf("feedback %q lacks %q", fb, tt.feedback)
			}
		})
	}
}

// runChecks runs checks in order as one all_must_pass composite, as the
// stop hook does: each verdict run and the overall status.
func runChecks(ctx context.Context, specs []config.CheckSpec, d *decider) ([]Verdict, string) {
	d.ctx = ctx
	v := d.checkAll(Verdict{Check: "checks"}, false, specs, "workflow.checks")
	return v.Children, v.Status
}

func allFeedback(v Verdict) []string {
	out := append([]string(nil), v.Feedback...)
	for _, c := range v.Children {
		out = append(out, allFeedback(c)...)
	}
	return out
}

// TestCheckersOfConfig: workflow.checks as Load decodes them (see
// config's TestLoadEveryKeyFromFile) run as their checkers, each with its
// options; a spec Load would refuse (in a Config made by hand) is an error
// naming its place; no checks, nothing judged.
func TestCheckersOfConfig(t *testing.T) {
	ctx := context.Background()
	r := &fakeRunner{res: shell.Result{ExitCode: 1, Output: []byte(strings.Repeat("line\n", 25))}}
	cfg := testConfig()
	cfg.Workflow.Checks = []config.CheckSpec{{Type: "beads"},
		{Type: "command", Run: "go test ./...", Timeout: 10 * time.Minute, TailLines: 20}}
	d := &decider{in: Input{Epic: cfg.Workflow.Epic}, cfg: cfg, env: Env{Ports: Ports{Beads: epic(nil), Runner: r.Run}}}
	vs, st := runChecks(ctx, cfg.Workflow.Checks, d)
	if st != VerdictIncomplete || len(vs) != 2 || vs[0].Check != "beads" || vs[1].Check != "command" ||
		!reflect.DeepEqual(r.calls, []string{"/proj|go test ./...|10m0s"}) || strings.Count(vs[1].Feedback[0], "line") != 20 {
		t.Errorf("checks = %s %+v, runs %v", st, vs, r.calls)
	}
	vs, st = runChecks(ctx, []config.CheckSpec{{Type: "files"}}, d)
	if st != VerdictError || len(vs) != 1 || vs[0].Check != "files" || !strings.HasPrefix(vs[0].Summary, "workflow.checks[0].paths") {
		t.Errorf("invalid spec: %s %+v", st, vs)
	}
	if vs, st := runChecks(ctx, nil, d); st != VerdictSkipped || len(vs) != 0 {
		t.Errorf("no checks: %s %+v", st, vs)
	}
}

func TestCheckShortCircuit(t *testing.T) {
	r := &fakeRunner{res: shell.Result{ExitCode: 0}}
	cfg := testConfig()
	cfg.Root = t.TempDir()
	cfg.Workflow.Checks = cfgCheckSpecs(t, map[string]any{"type": "files", "paths": []any{"nope"}}, map[string]any{"type": "command", "run": "x"})
	vs, st := runChecks(context.Background(), cfg.Workflow.Checks, &decider{cfg: cfg, env: Env{Ports: Ports{Beads: epic(nil), Runner: r.Run}}})
	if st != VerdictIncomplete || len(vs) != 1 || len(r.calls) != 0 {
		t.Fatalf("all_must_pass did not stop at the first failure: %s %+v %v", st, vs, r.calls)
	}
}

func TestFeedbackText(t *testing.T) {
	got := FeedbackText([]string{"a", "b", "c", "d", "e"}, 3)
	if strings.Join(got, "|") != "a|b|c|and 2 more" {
		t.Fatalf("got %v", got)
	}
	if got := FeedbackText([]string{"a", "b"}, 3); len(got) != 2 {
		t.Fatalf("got %v", got)
	}
}

// TestDecideWithChecks: the stop hook with workflow.checks.
func TestDecideWithChecks(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cfgWith := func(checks ...any) *config.Config {
		cfg := testConfig()
		cfg.Root = t.TempDir()
		cfg.Workflow.Checks = cfgCheckSpecs(t, checks...)
		cfg.Workflow.FeedbackLimit = 3
		return cfg
	}
	in := Input{SessionID: "s"}
	cmd := map[string]any{"type": "command", "run": "go test ./..."}

	// beads blocks first: the rules' own block, the command is not run.
	r := &fakeRunner{res: shell.Result{ExitCode: 1}}
	dec, st := decideCfg(ctx, in, state.State{}, cfgWith("beads", cmd), Env{Ports: Ports{Beads: epic([]string{"e.1"}), Runner: r.Run}, Now: now, Prompt: "P"})
	if !dec.Block || dec.Outcome != state.OutcomeContinue || len(r.calls) != 0 || st.Cycles != 1 {
		t.Fatalf("beads block: %+v %v", dec, r.calls)
	}
	// beads complete, command fails: blocked with the tail, feedback capped.
	r = &fakeRunner{res: shell.Result{ExitCode: 2, Output: []byte("boom\n")}}
	files := map[string]any{"type": "files", "paths": []any{"a", "b", "c", "d", "e"}}
	dec, _ = decideCfg(ctx, in, state.State{}, cfgWith("beads", map[string]any{"type": "composite", "mode": "any", "checks": []any{cmd, files}}), Env{Ports: Ports{Beads: epic(nil), Runner: r.Run}, Now: now, Prompt: "P"})
	if !dec.Block || dec.Outcome != state.OutcomeIncomplete || !strings.Contains(dec.Reason, "boom") || !strings.Contains(dec.Reason, "- and 3 more") || !strings.Contains(dec.Reason, "\nP\n") {
		t.Fatalf("command failure: %+v", dec)
	}
	// beads complete, command passes: the beads completion, checks noted.
	r = &fakeRunner{res: shell.Result{ExitCode: 0}}
	dec, _ = decideCfg(ctx, in, state.State{Cycles: 4}, cfgWith("beads", cmd), Env{Ports: Ports{Beads: epic(nil), Runner: r.Run}, Now: now, Prompt: "P"})
	if dec.Block || dec.Outcome != state.OutcomeComplete || !strings.Contains(dec.Why, "all checks passed") {
		t.Fatalf("all pass: %+v", dec)
	}
	// Only blocked work: the beads escalation, command not run.
	r = &fakeRunner{}
	dec, _ = decideCfg(ctx, in, state.State{}, cfgWith("beads", cmd), Env{Ports: Ports{Beads: epic(nil, issue("e.2", "blocked")), Runner: r.Run}, Now: now})
	if dec.Block || dec.Outcome != state.OutcomeEscalated || len(r.calls) != 0 {
		t.Fatalf("escalation: %+v", dec)
	}
	// Cycle budget spent: checks skipped, stop allowed.
	r = &fakeRunner{}
	dec, _ = decideCfg(ctx, in, state.State{Cycles: 50}, cfgWith(cmd), Env{Ports: Ports{Beads: epic(nil), Runner: r.Run}, Now: now})
	if dec.Block || dec.Outcome != state.OutcomeCapReached || len(r.calls) != 0 || !strings.Contains(dec.Why, "checks skipped") {
		t.Fatalf("cap: %+v", dec)
	}
	// max_duration spent: checks skipped.
	cfg := cfgWith(cmd)
	cfg.Workflow.MaxDuration = time.Hour
	dec, _ = decideCfg(ctx, in, state.State{Cycles: 3, FirstBlockAt: now.Add(-2 * time.Hour)}, cfg, Env{Ports: Ports{Beads: epic(nil), Runner: r.Run}, Now: now})
	if dec.Block || dec.Outcome != state.OutcomeCapReached || len(r.calls) != 0 {
		t.Fatalf("max_duration: %+v", dec)
	}
	// A check that cannot run allows the stop and says why.
	dec, _ = decideCfg(ctx, in, state.State{}, cfgWith(cmd), Env{Ports: Ports{Beads: epic(nil), Runner: (&fakeRunner{err: errors.New("no sh")}).Run}, Now: now})
	if dec.Block || dec.Outcome != state.OutcomeCheckError || !strings.Contains(dec.SystemMessage, "no sh") {
		t.Fatalf("check error: %+v", dec)
	}
	// Repeated failing checks are not a no-progress stall: only the cap ends them.
	r = &fakeRunner{res: shell.Result{ExitCode: 1}}
	st = state.State{}
	for i := 0; i < 8; i++ {
		dec, st = decideCfg(ctx, in, st, cfgWith("beads", cmd), Env{Ports: Ports{Beads: epic(nil), Runner: r.Run}, Now: now})
		if !dec.Block || dec.Outcome != state.OutcomeIncomplete {
			t.Fatalf("stop %d: %+v", i+1, dec)
		}
	}
}
