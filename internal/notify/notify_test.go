package notify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

func TestEventFor(t *testing.T) {
	tests := []struct {
		outcome state.Outcome
		block   bool
		want    string
	}{
		{state.OutcomeComplete, false, Complete},
		{state.OutcomeTokenDone, false, Complete},
		{state.OutcomeAccepted, false, Complete},
		{state.OutcomeEscalated, false, NeedsPerson},
		{state.OutcomeCheckError, false, NeedsPerson},
		{state.OutcomeConfigError, false, NeedsPerson},
		{state.OutcomeError, false, NeedsPerson},
		{state.OutcomeCapReached, false, CapReached},
		{state.OutcomeNoProgress, false, NoProgress},
		{state.OutcomeNoProgress, true, ""}, // the warning block
		{state.OutcomeBeadsError, false, BeadsError},
		{state.OutcomeBeadsError, true, BeadsError}, // on_beads_error: block
		{state.OutcomeBudget, false, Budget},
		{state.OutcomeContinue, true, ""},
		{state.OutcomeRejected, true, ""},
		{state.OutcomeCheckpoint, false, ""},
		{state.OutcomeNotDriven, false, ""},
		{state.OutcomeEnded, false, ""},
		{state.OutcomeSubagent, false, ""},
		{state.OutcomeSelfDisarm, false, SelfDisarm},
		{state.OutcomeReopened, true, Reopened},
		{state.OutcomeUnverified, true, ""},
	}
	for _, tt := range tests {
		if got := EventFor(engine.Decision{Outcome: tt.outcome, Block: tt.block}); got != tt.want {
			t.Errorf("EventFor(%s, block=%v) = %q, want %q", tt.outcome, tt.block, got, tt.want)
		}
	}
	// Every event the configuration accepts is one EventFor can give.
	for _, e := range config.NotifyEvents {
		if !slices.Contains([]string{Complete, NeedsPerson, CapReached, NoProgress, BeadsError, Budget, SelfDisarm, Reopened}, e) {
			t.Errorf("configured event %q is never sent", e)
		}
	}
}

func TestFromTrustedSource(t *testing.T) {
	cfg := &config.Config{File: "/p/project.yaml", Workflow: config.Workflow{Notify: []config.Notify{{Run: "true", Events: []string{Complete}}}}}
	src := func(from string) *config.Sources { return &config.Sources{"workflow.notify": from} }
	tests := []struct {
		name     string
		src      *config.Sources
		explicit string
		trusted  func(string) bool
		want     bool
	}{
		{"the project's file is not trusted", src("/p/project.yaml"), "", nil, false},
		{"named with --config", src("/p/project.yaml"), "/p/project.yaml", nil, true},
		{"the seam trusts it", src("/p/project.yaml"), "", func(f string) bool { return f == "/p/project.yaml" }, true},
		{"the seam trusts another file", src("/p/project.yaml"), "", func(f string) bool { return f == "/q/project.yaml" }, false},
		{"the environment", src("env RUNTASKS_WORKFLOW__NOTIFY"), "", nil, true},
		{"defaults", src(config.SourceDefault), "", nil, false},
		{"no sources", nil, "", nil, false},
	}
	for _, tt := range tests {
		if got := FromTrustedSource(tt.explicit, tt.trusted)(cfg, tt.src); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A notify command gets the event as JSON on stdin and as RUNTASKS_*
// variables, runs in the project root, and its failures and timeouts are
// reported; a timed-out command's whole process group is stopped.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "got")
	pidFile := filepath.Join(dir, "child.pid")
	ev := Event{Event: Budget, Outcome: "budget", Session: "s1", Epic: "bd-e", Agent: "claude", Cycle: 4,
		Why: "session budget spent", Usage: &usage.Spent{Tokens: usage.Tokens{Input: 10, Output: 5}, Cost: 0.25},
		Project: dir, Time: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	job := Job{Event: ev, Dir: dir, Log: filepath.Join(dir, "notify.log"), Commands: []config.Notify{
		{Run: `cat > got; printf '%s|%s|%s|%s|%s|%s|%s\n' "$RUNTASKS_EVENT" "$RUNTASKS_SESSION" "$RUNTASKS_EPIC" "$RUNTASKS_CYCLE" "$RUNTASKS_TOKENS" "$PWD" "$RUNTASKS_SUMMARY" > env`, Events: []string{Budget}},
		{Run: "echo no webhook >&2; exit 7", Events: []string{Budget}},
		{Run: "sleep 30 & echo $! > " + pidFile + "; wait", Events: []string{Budget}, Timeout: 300 * time.Millisecond},
	}}
	start := time.Now()
	res := Run(context.Background(), job, os.Environ())
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Run took %s", took)
	}
	if !res[0].OK || res[1].OK || !strings.Contains(res[1].Detail, "exit status 7: no webhook") ||
		res[2].OK || !strings.HasPrefix(res[2].Detail, "timed out after 300ms; its process group was stopped") {
		t.Errorf("outcomes = %+v", res)
	}
	var got Event
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &got); err != nil || got.Event != Budget || got.Usage.Cost != 0.25 {
		t.Errorf("stdin: %s (%v)", data, err)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	want := "budget|s1|bd-e|4|15|" + dir + "|runtasks bd-e spent its budget (session s1): session budget spent\n"
	if string(env) != want {
		t.Errorf("variables:\n got %q\nwant %q", env, want)
	}
	// The timed-out command's background child was stopped with it.
	pid, _ := os.ReadFile(pidFile)
	if p := strings.TrimSpace(string(pid)); p == "" {
		t.Errorf("no child pid")
	} else if _, err := os.Stat("/proc/" + p); err == nil {
		time.Sleep(3 * time.Second) // the grace before SIGKILL
		if st, err := os.ReadFile("/proc/" + p + "/stat"); err == nil && !strings.Contains(string(st), ") Z") {
			t.Errorf("the timed-out command's child %s still runs", p)
		}
	}
	if err := Log(job, res); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(job.Log)
	if n := strings.Count(string(log), "\n"); n != 3 || !strings.Contains(string(log), "FAILED: exit status 7") ||
		!strings.Contains(string(log), "FAILED: timed out") {
		t.Errorf("log:\n%s", log)
	}
}

func TestReadJobBounded(t *testing.T) {
	if _, err := ReadJob(strings.NewReader(strings.Repeat(" ", MaxJob+2))); err == nil {
		t.Error("an oversized job is accepted")
	}
	if _, err := ReadJob(strings.NewReader("{")); err == nil {
		t.Error("a broken job is accepted")
	}
}

// Every event a notify command can ask for says what happened in its
// one-line summary.
func TestSummaryNamesEveryEvent(t *testing.T) {
	for _, ev := range []string{Complete, NeedsPerson, CapReached, NoProgress, BeadsError, Budget, SelfDisarm, Reopened} {
		got := Event{Event: ev, Epic: "E", Session: "s1", Why: "w"}.Summary()
		if strings.HasPrefix(got, "runtasks E  ") || !strings.HasSuffix(got, " (session s1): w") {
			t.Errorf("%s: summary %q names nothing that happened", ev, got)
		}
	}
}

// An event's counts are in its JSON only when the decision has some.
func TestEventCountsOmittedWhenZero(t *testing.T) {
	for _, tt := range []struct {
		counts state.Counts
		want   bool
	}{{state.Counts{}, false}, {state.Counts{Ready: 2, Remaining: 2}, true}} {
		data, _ := json.Marshal(NewEvent(Complete, engine.Input{}, engine.Decision{Counts: tt.counts}, "/p", time.Now()))
		if got := strings.Contains(string(data), `"counts":{"ready":2`); got != tt.want || (!tt.want && strings.Contains(string(data), "counts")) {
			t.Errorf("counts %+v: %s", tt.counts, data)
		}
	}
}
