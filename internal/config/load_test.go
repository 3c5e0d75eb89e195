package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/runtasks/runtasks/internal/usage"
)

// cfgDefaults is the configuration with no file, no environment and no
// flags, written out by hand.
func cfgDefaults(root string) Config {
	return Config{
		Workflow: Workflow{
			StopHook: StopHook{
				Enabled: true, CheckReadyTasks: true, CheckInProgress: true, MaxCycles: 50,
				AllowExitOn:             []string{CondAllComplete, CondAllBlocked, CondContextCheckpoint},
				CompletionPromises:      []Promise{{Text: "ALL TASKS COMPLETE"}, {Text: "EPIC COMPLETE"}, {Text: "BLOCKED - NEEDS USER"}, {Text: "CONTEXT LIMIT - CHECKPOINT"}},
				OnBeadsError:            "allow",
				SubagentStop:            "allow",
				CheckpointRequiresClean: true,
				NextIDs:                 3,
			},
			DoneToken:        DoneToken{Prefix: "TASKMASTER_DONE"},
			NoProgressCycles: 3,
			StuckAfter:       2 * time.Hour,
			StuckAction:      "block",
			Worktrees:        Worktrees{Pattern: ".worktrees/agent-{id}"},
			Checks:           []CheckSpec{},
			FeedbackLimit:    3,
			Notify:           []Notify{},
			Verify:           Verify{Checks: []CheckSpec{}, Overrides: []VerifyOverride{}, OnUnverified: "reopen", MaxPerStop: 3},
		},
		Usage: UsageConfig{Prices: []usage.Price{}},
		Beads: Beads{Bin: "bd", Timeout: 10 * time.Second, MaxProcesses: 4, QueueTimeout: 60 * time.Second},
		State: StateDir{Dir: ".runtasks"},
		Log:   Log{Level: "warn"},
		Claim: Claim{
			Patterns:    []string{`(?i)^\s*/?(?:claim|select|start|work on|pick up)\s+(?P<id>[A-Za-z0-9][A-Za-z0-9_-]*-[A-Za-z0-9][A-Za-z0-9._-]*)\b`},
			ArmPatterns: []string{`(?i)^\s*/(?:runtasks:)?run-tasks\s+(?P<id>[A-Za-z0-9][A-Za-z0-9_-]*-[A-Za-z0-9][A-Za-z0-9._-]*)\b`},
			RunsDir:     "runs",
		},
		Run:  Run{Agent: "claude", Session: "fresh", ClaudeBin: "claude", CodexBin: "codex", Dir: "runs", MaxMergeFailures: 2, MaxTaskFailures: 2},
		Root: root,
	}
}

// cfgProject makes a project root (with .git) holding project.yaml when body
// is not empty.
func cfgProject(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	cfgMkdir(t, filepath.Join(dir, ".git"))
	if body != "" {
		cfgWrite(t, filepath.Join(dir, ProjectFile), body)
	}
	return dir
}

func cfgMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func cfgWrite(t *testing.T, path, body string) {
	t.Helper()
	cfgMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cfgLoad(t *testing.T, opts LoadOptions) (*Config, Sources) {
	t.Helper()
	cfg, src, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg, *src
}

func cfgAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestLoadDefaults(t *testing.T) {
	dir := cfgProject(t, "")
	cfg, src := cfgLoad(t, LoadOptions{StartDir: dir})
	if want := cfgDefaults(dir); !reflect.DeepEqual(*cfg, want) {
		t.Errorf("config:\n got %#v\nwant %#v", *cfg, want)
	}
	keys := ConfigKeys()
	if len(src) != len(keys) {
		t.Errorf("sources name %d keys, want %d: %v", len(src), len(keys), src)
	}
	for _, k := range keys {
		if src[k] != SourceDefault {
			t.Errorf("source of %s = %q, want default", k, src[k])
		}
	}
}

func TestLoadDocumentedFormat(t *testing.T) {
	path := cfgAbs(t, "testdata/config/documented.yaml")
	cfg, src := cfgLoad(t, LoadOptions{ConfigFile: path, StartDir: t.TempDir()})
	want := cfgDefaults(filepath.Dir(path))
	want.File = path
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("config:\n got %#v\nwant %#v", *cfg, want)
	}
	for _, k := range ConfigKeys() {
		wantSrc := SourceDefault
		if strings.HasPrefix(k, "workflow.stop_hook.") && !slices.Contains([]string{"on_beads_error", "subagent_stop", "checkpoint_requires_clean", "next_ids"}, strings.TrimPrefix(k, "workflow.stop_hook.")) {
			wantSrc = path
		}
		if src[k] != wantSrc {
			t.Errorf("source of %s = %q, want %q", k, src[k], wantSrc)
		}
	}
	wantPromises := []Promise{
		{"ALL TASKS COMPLETE", CondAllComplete},
		{"EPIC COMPLETE", CondAllComplete},
		{"BLOCKED - NEEDS USER", CondAllBlocked},
		{"CONTEXT LIMIT - CHECKPOINT", CondContextCheckpoint},
	}
	if got := cfg.Promises(); !reflect.DeepEqual(got, wantPromises) {
		t.Errorf("promises = %v, want %v", got, wantPromises)
	}
}

func TestLoadEveryKeyFromFile(t *testing.T) {
	path := cfgAbs(t, "testdata/config/custom.yaml")
	cfg, src := cfgLoad(t, LoadOptions{ConfigFile: path})
	want := Config{
		Workflow: Workflow{
			Epic: "bd-x7y8",
			StopHook: StopHook{
				MaxCycles:   0,
				AllowExitOn: []string{CondAllComplete, CondAlways},
				CompletionPromises: []Promise{{Text: "ALL TASKS COMPLETE"}, {Text: "SHIPPED"},
					{Text: "GIVING UP", Condition: "always"}, {Text: "BLOCKED - NEEDS USER"}},
				OnBeadsError: "block",
				SubagentStop: "drive",
				NextIDs:      5,
			},
			DoneToken:   DoneToken{Required: true, Prefix: "DONE", Max: 7},
			StuckAfter:  90 * time.Minute,
			StuckAction: "report",
			Worktrees:   Worktrees{Pattern: "wt/{id}"},
			Checks: []CheckSpec{{Type: "beads"},
				{Type: "command", Run: "go test ./...", Timeout: 10 * time.Minute, TailLines: 20}},
			FeedbackLimit: 5,
			Budget:        Budget{SessionTokens: 2000000, SessionCost: 5, EpicTokens: 10000000, EpicCost: 25.5},
			Notify: []Notify{{Run: "notify-send runtasks \"$RUNTASKS_EVENT\"", Events: []string{"needs_person", "complete"}},
				{Run: "true", Events: []string{"budget"}, Timeout: 5 * time.Second}},
			Verify: Verify{Checks: []CheckSpec{{Type: "command", Name: "tests", Run: "make test", Timeout: time.Minute, TailLines: 20}},
				Overrides: []VerifyOverride{{Label: "docs", Checks: []CheckSpec{}}}, OnUnverified: "warn", MaxPerStop: 2, TaskCommands: true},
		},
		Usage: UsageConfig{Prices: []usage.Price{{Model: "fake-*", Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25}}},
		Claim: Claim{Patterns: []string{`^take (?P<id>\S+)$`}, ArmPatterns: []string{`^drive (?P<id>\S+)$`},
			RunsDir: "var/runs", Templates: "tmpl", Actor: "alice"},
		Run:     Run{Agent: "codex", Session: "resume", ClaudeBin: "/opt/claude", CodexBin: "/opt/codex", Dir: "cycles", MaxMergeFailures: 5, MaxTaskFailures: 5},
		Beads:   Beads{Bin: "/opt/bd", Dir: "../store/.beads", Timeout: 90 * time.Second, MaxProcesses: 16, QueueTimeout: 2 * time.Minute},
		State:   StateDir{Dir: "/var/tmp/runtasks"},
		Log:     Log{File: "runtasks.log", Level: "debug"},
		Prompts: Prompts{RunTasks: "prompts/run.md"},
		Root:    filepath.Dir(path),
		File:    path,
	}
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("config:\n got %#v\nwant %#v", *cfg, want)
	}
	for _, k := range ConfigKeys() {
		if src[k] != path {
			t.Errorf("source of %s = %q, want the file", k, src[k])
		}
	}
	wantPromises := []Promise{
		{"ALL TASKS COMPLETE", CondAllComplete},
		{"SHIPPED", CondAllComplete},
		{"GIVING UP", CondAlways},
		{"BLOCKED - NEEDS USER", CondAllBlocked},
	}
	if got := cfg.Promises(); !reflect.DeepEqual(got, wantPromises) {
		t.Errorf("promises = %v, want %v", got, wantPromises)
	}
	if got, want := cfg.BeadsDir(), filepath.Join(filepath.Dir(filepath.Dir(path)), "store", ".beads"); got != want {
		t.Errorf("BeadsDir = %q, want %q", got, want)
	}
	if got := cfg.StateDir(); got != "/var/tmp/runtasks" {
		t.Errorf("StateDir = %q", got)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each is one error line, after "PATH:" (then the line)
	}{
		{"misspelt key", "workflow:\n  stop_hook:\n    max_cycle: 5\n",
			[]string{"3: workflow.stop_hook.max_cycle: unknown key (did you mean max_cycles?)"}},
		{"misspelt section", "workflow:\n  stop-hook:\n    max_cycles: 5\n",
			[]string{"2: workflow.stop-hook: unknown key (did you mean stop_hook?)"}},
		{"transposed letters", "log:\n  levle: info\n",
			[]string{"2: log.levle: unknown key (did you mean level?)"}},
		{"key in the wrong section", "workflow:\n  max_cycles: 5\n",
			[]string{"2: workflow.max_cycles: unknown key (did you mean workflow.stop_hook.max_cycles?)"}},
		{"unknown key, nothing close", "colour: red\n",
			[]string{"1: colour: unknown key"}},
		{"int given a word", "workflow:\n  stop_hook:\n    max_cycles: fifty\n",
			[]string{`3: workflow.stop_hook.max_cycles: expected an integer, got string "fifty"`}},
		{"int given a fraction", "workflow:\n  next_ids: 1.5\n",
			[]string{"2: workflow.next_ids: unknown key (did you mean workflow.stop_hook.next_ids?)"}},
		{"int given a fraction in place", "workflow:\n  stop_hook:\n    next_ids: 1.5\n",
			[]string{"3: workflow.stop_hook.next_ids: expected an integer, got number 1.5"}},
		{"bool given a string", "workflow:\n  stop_hook:\n    enabled: \"yes\"\n",
			[]string{`3: workflow.stop_hook.enabled: expected true or false, got string "yes"`}},
		{"bool given a quoted true", "workflow:\n  stop_hook:\n    enabled: \"true\"\n",
			[]string{`3: workflow.stop_hook.enabled: expected true or false, got string "true"`}},
		{"int given a quoted number", "workflow:\n  stop_hook:\n    max_cycles: \"50\"\n",
			[]string{`3: workflow.stop_hook.max_cycles: expected an integer, got string "50"`}},
		{"list given a string", "workflow:\n  stop_hook:\n    allow_exit_on: all_complete\n",
			[]string{`3: workflow.stop_hook.allow_exit_on: expected a list, got string "all_complete"`}},
		{"list item not a string", "workflow:\n  stop_hook:\n    allow_exit_on: [all_complete, [x]]\n",
			[]string{"3: workflow.stop_hook.allow_exit_on[1]: expected a string, got a list"}},
		{"section given a scalar", "workflow: 5\n",
			[]string{"1: workflow: expected a mapping of keys, got number 5"}},
		{"string given a number", "workflow:\n  epic: 123\n",
			[]string{"2: workflow.epic: expected a string, got number 123"}},
		{"negative max_cycles", "workflow:\n  stop_hook:\n    max_cycles: -1\n",
			[]string{"3: workflow.stop_hook.max_cycles: must be 0 or more, got -1"}},
		{"negative next_ids", "workflow:\n  stop_hook:\n    next_ids: -3\n",
			[]string{"3: workflow.stop_hook.next_ids: must be 0 or more, got -3"}},
		{"negative done_token.max", "workflow:\n  done_token:\n    max: -1\n",
			[]string{"3: workflow.done_token.max: must be 0 or more, got -1"}},
		{"negative no_progress_cycles", "workflow:\n  no_progress_cycles: -1\n",
			[]string{"2: workflow.no_progress_cycles: must be 0 or more, got -1"}},
		{"unknown exit condition", "workflow:\n  stop_hook:\n    allow_exit_on: [all_complete, sometimes]\n",
			[]string{`3: workflow.stop_hook.allow_exit_on[1]: must be one of all_complete, all_blocked, context_checkpoint, always, got "sometimes"`}},
		{"bad on_beads_error", "workflow:\n  stop_hook:\n    on_beads_error: ignore\n",
			[]string{`3: workflow.stop_hook.on_beads_error: must be one of allow, block, got "ignore"`}},
		{"bad subagent_stop", "workflow:\n  stop_hook:\n    subagent_stop: block\n",
			[]string{`3: workflow.stop_hook.subagent_stop: must be one of allow, drive, got "block"`}},
		{"bad log level", "log:\n  level: verbose\n",
			[]string{`2: log.level: must be one of debug, info, warn, error, got "verbose"`}},
		{"negative duration", "workflow:\n  stuck_after: -1h\n",
			[]string{"2: workflow.stuck_after: must be 0s or more, got -1h"}},
		{"negative max_duration", "workflow:\n  max_duration: -30s\n",
			[]string{"2: workflow.max_duration: must be 0s or more, got -30s"}},
		{"zero timeout", "beads:\n  timeout: 0s\n",
			[]string{"2: beads.timeout: must be more than 0, got 0s"}},
		{"duration without a unit", "workflow:\n  stuck_after: 90\n",
			[]string{`2: workflow.stuck_after: expected a duration such as "90s" or "2h", got number 90`}},
		{"duration not a duration", "workflow:\n  max_duration: soon\n",
			[]string{`2: workflow.max_duration: expected a duration such as "90s" or "2h", got string "soon"`}},
		{"empty bd", "beads:\n  bin: \"\"\n",
			[]string{"2: beads.bin: must not be empty"}},
		{"empty prefix", "workflow:\n  done_token:\n    prefix: \"\"\n",
			[]string{"3: workflow.done_token.prefix: must not be empty"}},
		{"promises not a list", "workflow:\n  stop_hook:\n    completion_promises: DONE\n",
			[]string{`3: workflow.stop_hook.completion_promises: expected a list, got string "DONE"`}},
		{"empty promise", "workflow:\n  stop_hook:\n    completion_promises: [\"OK\", \"  \"]\n",
			[]string{"3: workflow.stop_hook.completion_promises[1].text: must not be empty"}},
		{"empty promise object", "workflow:\n  stop_hook:\n    completion_promises:\n      - {text: \"\", condition: always}\n",
			[]string{"4: workflow.stop_hook.completion_promises[0].text: must not be empty"}},
		{"unknown promise condition", "workflow:\n  stop_hook:\n    completion_promises:\n      - {text: X, condition: whenever}\n",
			[]string{`4: workflow.stop_hook.completion_promises[0].condition: must be one of all_complete, all_blocked, context_checkpoint, always, got "whenever"`}},
		{"misspelt promise field", "workflow:\n  stop_hook:\n    completion_promises:\n      - {txt: X}\n",
			[]string{
				"4: workflow.stop_hook.completion_promises[0].txt: unknown key (did you mean text?)",
				"4: workflow.stop_hook.completion_promises[0].text: must not be empty",
			}},
		{"promise of the wrong type", "workflow:\n  stop_hook:\n    completion_promises: [5]\n",
			[]string{"3: workflow.stop_hook.completion_promises[0]: expected a string or {text, condition}, got number 5"}},
		// Ranges: next_ids sizes a slice in the stop hook, so a huge one
		// must never get through (it panicked, or ran out of memory).
		{"next_ids the largest int", "workflow:\n  stop_hook:\n    next_ids: 9223372036854775807\n",
			[]string{"3: workflow.stop_hook.next_ids: must be at most 50, got 9223372036854775807"}},
		{"next_ids 2^32", "workflow:\n  stop_hook:\n    next_ids: 4294967296\n",
			[]string{"3: workflow.stop_hook.next_ids: must be at most 50, got 4294967296"}},
		{"next_ids one too many", "workflow:\n  stop_hook:\n    next_ids: 51\n",
			[]string{"3: workflow.stop_hook.next_ids: must be at most 50, got 51"}},
		{"int beyond int64", "workflow:\n  stop_hook:\n    next_ids: 18446744073709551615\n",
			[]string{"3: workflow.stop_hook.next_ids: out of range, got number 18446744073709551615"}},
		{"int as a huge float", "workflow:\n  stop_hook:\n    max_cycles: 1e30\n",
			[]string{"3: workflow.stop_hook.max_cycles: expected an integer, got number 1e+30"}},
		{"max_cycles too high", "workflow:\n  stop_hook:\n    max_cycles: 100001\n",
			[]string{"3: workflow.stop_hook.max_cycles: must be at most 100000, got 100001"}},
		{"done_token.max too high", "workflow:\n  done_token:\n    max: 1000000\n",
			[]string{"3: workflow.done_token.max: must be at most 100000, got 1000000"}},
		{"no_progress_cycles too high", "workflow:\n  no_progress_cycles: 1001\n",
			[]string{"2: workflow.no_progress_cycles: must be at most 1000, got 1001"}},
		{"feedback_limit out of range", "workflow:\n  feedback_limit: -1\n",
			[]string{"2: workflow.feedback_limit: must be 0 or more, got -1"}},
		{"stuck_after too long", "workflow:\n  stuck_after: 721h\n",
			[]string{"2: workflow.stuck_after: must be at most 720h, got 721h"}},
		{"max_duration too long", "workflow:\n  max_duration: 1000h\n",
			[]string{"2: workflow.max_duration: must be at most 720h, got 1000h"}},
		{"beads.timeout too long", "beads:\n  timeout: 2h\n",
			[]string{"2: beads.timeout: must be at most 1h, got 2h"}},
		{"no bd process allowed", "beads:\n  max_processes: 0\n",
			[]string{"2: beads.max_processes: must be 1 or more, got 0"}},
		{"zero queue timeout", "beads:\n  queue_timeout: 0s\n",
			[]string{"2: beads.queue_timeout: must be more than 0, got 0s"}},
		{"list given a mapping", "workflow:\n  stop_hook:\n    allow_exit_on: {a: 1}\n",
			[]string{"3: workflow.stop_hook.allow_exit_on: expected a list, got a mapping"}},
		{"promise condition not a string", "workflow:\n  stop_hook:\n    completion_promises:\n      - {text: X, condition: 5}\n",
			[]string{"4: workflow.stop_hook.completion_promises[0].condition: expected a string, got number 5"}},
		// workflow.checks: each item and option named, nested ones too.
		{"checks not a list", "workflow:\n  checks: beads\n",
			[]string{`2: workflow.checks: expected a list, got string "beads"`}},
		{"unknown checker", "workflow:\n  checks: [beads, tests]\n",
			[]string{`2: workflow.checks[1].type: unknown checker "tests" (want one of beads, promise, done_token, command, files, plan, results, composite)`}},
		{"checker option misspelt", "workflow:\n  checks:\n    - {type: command, run: make, timout: 5m}\n",
			[]string{"3: workflow.checks[0].timout: unknown option for the command checker (known: dir, name, run, tail_lines, timeout) (did you mean timeout?)"}},
		{"checker options wrong", "workflow:\n  checks:\n    - {type: command, run: \"\", timeout: 2d, tail_lines: x}\n",
			[]string{
				`3: workflow.checks[0].timeout: expected a duration such as "90s" or "2h", got string "2d"`,
				`3: workflow.checks[0].tail_lines: expected an integer, got string "x"`,
			}},
		{"checker option out of range", "workflow:\n  checks:\n    - {type: command, run: make, timeout: 25h, tail_lines: 99999}\n",
			[]string{
				"3: workflow.checks[0].timeout: must be at most 24h, got 25h",
				"3: workflow.checks[0].tail_lines: must be at most 10000, got 99999",
			}},
		{"nested check", "workflow:\n  checks:\n    - beads\n    - type: composite\n      mode: any\n      checks:\n        - promise\n        - {type: files, paths: []}\n",
			[]string{"8: workflow.checks[1].checks[1].paths: must not be empty"}},
		{"every problem reported", "workflow:\n  epic: [a]\n  stop_hook:\n    max_cycles: -2\nlog:\n  levels: x\n",
			[]string{
				"2: workflow.epic: expected a string, got a list",
				"4: workflow.stop_hook.max_cycles: must be 0 or more, got -2",
				"6: log.levels: unknown key (did you mean level?)",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgProject(t, tt.yaml)
			path := filepath.Join(dir, ProjectFile)
			_, _, err := Load(LoadOptions{StartDir: dir})
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Load error = %v, want an ErrorList", err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, path+":"+w)
			}
			got := strings.Split(err.Error(), "\n")
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n got %q\nwant %q", got, want)
			}
			for _, e := range list {
				if e.Source != path {
					t.Errorf("error source = %q, want %q", e.Source, path)
				}
			}
			if err := ValidateYAML(path, cfgRead(t, path)); err == nil || err.Error() != list.Error() {
				t.Errorf("ValidateYAML = %v, want the same errors as Load", err)
			}
		})
	}
}

func TestLoadYAMLSyntaxError(t *testing.T) {
	dir := cfgProject(t, "workflow:\n  stop_hook: [\n")
	_, _, err := Load(LoadOptions{StartDir: dir})
	prefix := filepath.Join(dir, ProjectFile) + ": yaml: "
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error = %v, want it to start with %q", err, prefix)
	}
}

func TestLoadNullKeepsLowerLayer(t *testing.T) {
	dir := cfgProject(t, "workflow:\n  epic:\n  stop_hook:\n    max_cycles:\nlog:\n")
	cfg, src := cfgLoad(t, LoadOptions{StartDir: dir})
	if cfg.Workflow.StopHook.MaxCycles != 50 || src["workflow.stop_hook.max_cycles"] != SourceDefault {
		t.Errorf("max_cycles = %d from %s, want 50 from default", cfg.Workflow.StopHook.MaxCycles, src["workflow.stop_hook.max_cycles"])
	}
}

func TestLoadEnv(t *testing.T) {
	const file = "workflow:\n  epic: bd-file\n  stop_hook:\n    max_cycles: 7\n"
	tests := []struct {
		name    string
		env     []string
		key     string
		want    any
		wantSrc string // "file" = the project.yaml
	}{
		{"file without env", nil, "workflow.stop_hook.max_cycles", 7, "file"},
		{"long form overrides file", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES=5"},
			"workflow.stop_hook.max_cycles", 5, "env RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES"},
		{"alias overrides file", []string{"RUNTASKS_EPIC=bd-env"}, "workflow.epic", "bd-env", "env RUNTASKS_EPIC"},
		{"empty string clears", []string{"RUNTASKS_EPIC="}, "workflow.epic", "", "env RUNTASKS_EPIC"},
		{"alias RUNTASKS_BD", []string{"RUNTASKS_BD=/opt/bd"}, "beads.bin", "/opt/bd", "env RUNTASKS_BD"},
		{"alias RUNTASKS_BEADS_DIR", []string{"RUNTASKS_BEADS_DIR=store"}, "beads.dir", "store", "env RUNTASKS_BEADS_DIR"},
		{"alias RUNTASKS_STATE_DIR", []string{"RUNTASKS_STATE_DIR=st"}, "state.dir", "st", "env RUNTASKS_STATE_DIR"},
		{"alias RUNTASKS_LOG_LEVEL", []string{"RUNTASKS_LOG_LEVEL=debug"}, "log.level", "debug", "env RUNTASKS_LOG_LEVEL"},
		{"alias RUNTASKS_LOG_FILE", []string{"RUNTASKS_LOG_FILE=x.log"}, "log.file", "x.log", "env RUNTASKS_LOG_FILE"},
		{"alias RUNTASKS_MAX_CYCLES", []string{"RUNTASKS_MAX_CYCLES=9"}, "workflow.stop_hook.max_cycles", 9, "env RUNTASKS_MAX_CYCLES"},
		{"TASKMASTER_DONE_PREFIX", []string{"TASKMASTER_DONE_PREFIX=DONE"}, "workflow.done_token.prefix", "DONE", "env TASKMASTER_DONE_PREFIX"},
		{"TASKMASTER_MAX", []string{"TASKMASTER_MAX=4"}, "workflow.done_token.max", 4, "env TASKMASTER_MAX"},
		{"long form beats alias", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES=4", "RUNTASKS_MAX_CYCLES=3"},
			"workflow.stop_hook.max_cycles", 4, "env RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES"},
		{"RUNTASKS_ beats TASKMASTER_", []string{"RUNTASKS_WORKFLOW__DONE_TOKEN__MAX=6", "TASKMASTER_MAX=2"},
			"workflow.done_token.max", 6, "env RUNTASKS_WORKFLOW__DONE_TOKEN__MAX"},
		{"last duplicate wins", []string{"RUNTASKS_EPIC=a", "RUNTASKS_EPIC=b"}, "workflow.epic", "b", "env RUNTASKS_EPIC"},
		{"bool", []string{"RUNTASKS_WORKFLOW__DONE_TOKEN__REQUIRED=true"}, "workflow.done_token.required", true, "env RUNTASKS_WORKFLOW__DONE_TOKEN__REQUIRED"},
		{"bool as 1, spaced", []string{"RUNTASKS_WORKFLOW__DONE_TOKEN__REQUIRED= 1"}, "workflow.done_token.required", true, "env RUNTASKS_WORKFLOW__DONE_TOKEN__REQUIRED"},
		{"duration", []string{"RUNTASKS_WORKFLOW__STUCK_AFTER=90m"}, "workflow.stuck_after", 90 * time.Minute, "env RUNTASKS_WORKFLOW__STUCK_AFTER"},
		{"list from commas", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON=all_complete, always"},
			"workflow.stop_hook.allow_exit_on", []string{"all_complete", "always"}, "env RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON"},
		{"empty list", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON="},
			"workflow.stop_hook.allow_exit_on", []string{}, "env RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON"},
		{"promises from commas", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES=DONE,BLOCKED - NEEDS USER"},
			"workflow.stop_hook.completion_promises", []Promise{{Text: "DONE"}, {Text: "BLOCKED - NEEDS USER"}}, "env RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES"},
		{"blank list items dropped", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES=A,, ,B"},
			"workflow.stop_hook.completion_promises", []Promise{{Text: "A"}, {Text: "B"}}, "env RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES"},
		{"checks from commas", []string{"RUNTASKS_WORKFLOW__CHECKS=beads, plan"},
			"workflow.checks", []CheckSpec{{Type: "beads"}, {Type: "plan"}}, "env RUNTASKS_WORKFLOW__CHECKS"},
		{"next_ids at its top", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__NEXT_IDS=50"}, "workflow.stop_hook.next_ids", 50, "env RUNTASKS_WORKFLOW__STOP_HOOK__NEXT_IDS"},
		{"int with spaces", []string{"RUNTASKS_MAX_CYCLES= 12 "}, "workflow.stop_hook.max_cycles", 12, "env RUNTASKS_MAX_CYCLES"},
		{"other variables ignored", []string{"PATH=/bin", "TASKMASTER_OTHER=x", "HOME=/h", "NOEQUALS"},
			"workflow.epic", "bd-file", "file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgProject(t, file)
			cfg, src := cfgLoad(t, LoadOptions{StartDir: dir, Environ: tt.env})
			got, ok := cfg.Value(tt.key)
			if !ok {
				t.Fatalf("no key %s", tt.key)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.key, got, tt.want)
			}
			wantSrc := tt.wantSrc
			if wantSrc == "file" {
				wantSrc = filepath.Join(dir, ProjectFile)
			}
			if src[tt.key] != wantSrc {
				t.Errorf("source of %s = %q, want %q", tt.key, src[tt.key], wantSrc)
			}
		})
	}
}

func TestLoadEnvErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  []string
		want []string // error lines; FILE stands for the project.yaml path
	}{
		{"bad int", "", []string{"RUNTASKS_MAX_CYCLES=many"},
			[]string{`env RUNTASKS_MAX_CYCLES: workflow.stop_hook.max_cycles: expected an integer, got string "many"`}},
		{"bad value", "", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES=-1"},
			[]string{"env RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES: workflow.stop_hook.max_cycles: must be 0 or more, got -1"}},
		{"bad bool", "", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ENABLED=maybe"},
			[]string{`env RUNTASKS_WORKFLOW__STOP_HOOK__ENABLED: workflow.stop_hook.enabled: expected true or false, got string "maybe"`}},
		{"bad list item", "", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON=all_complete,never"},
			[]string{`env RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON: workflow.stop_hook.allow_exit_on[1]: must be one of all_complete, all_blocked, context_checkpoint, always, got "never"`}},
		{"next_ids the largest int", "", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__NEXT_IDS=9223372036854775807"},
			[]string{"env RUNTASKS_WORKFLOW__STOP_HOOK__NEXT_IDS: workflow.stop_hook.next_ids: must be at most 50, got 9223372036854775807"}},
		{"next_ids 2^32", "", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__NEXT_IDS=4294967296"},
			[]string{"env RUNTASKS_WORKFLOW__STOP_HOOK__NEXT_IDS: workflow.stop_hook.next_ids: must be at most 50, got 4294967296"}},
		{"int beyond int64", "", []string{"RUNTASKS_MAX_CYCLES=99999999999999999999"},
			[]string{`env RUNTASKS_MAX_CYCLES: workflow.stop_hook.max_cycles: out of range, got string "99999999999999999999"`}},
		{"empty bool", "", []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ENABLED="},
			[]string{`env RUNTASKS_WORKFLOW__STOP_HOOK__ENABLED: workflow.stop_hook.enabled: expected true or false, got string ""`}},
		{"empty int", "", []string{"RUNTASKS_MAX_CYCLES="},
			[]string{`env RUNTASKS_MAX_CYCLES: workflow.stop_hook.max_cycles: expected an integer, got string ""`}},
		{"hex int", "", []string{"RUNTASKS_MAX_CYCLES=0x10"},
			[]string{`env RUNTASKS_MAX_CYCLES: workflow.stop_hook.max_cycles: expected an integer, got string "0x10"`}},
		{"unknown checker", "", []string{"RUNTASKS_WORKFLOW__CHECKS=beads,nope"},
			[]string{`env RUNTASKS_WORKFLOW__CHECKS: workflow.checks[1].type: unknown checker "nope" (want one of beads, promise, done_token, command, files, plan, results, composite)`}},
		{"bad TASKMASTER_MAX", "", []string{"TASKMASTER_MAX=-5"},
			[]string{"env TASKMASTER_MAX: workflow.done_token.max: must be 0 or more, got -5"}},
		{"empty timeout", "", []string{"RUNTASKS_BEADS__TIMEOUT="},
			[]string{`env RUNTASKS_BEADS__TIMEOUT: beads.timeout: expected a duration such as "90s" or "2h", got string ""`}},
		{"file and env both reported", "log:\n  level: loud\n", []string{"RUNTASKS_LOG_LEVEL=louder"},
			[]string{
				`FILE:2: log.level: must be one of debug, info, warn, error, got "loud"`,
				`env RUNTASKS_LOG_LEVEL: log.level: must be one of debug, info, warn, error, got "louder"`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgProject(t, tt.file)
			_, _, err := Load(LoadOptions{StartDir: dir, Environ: tt.env})
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			want := strings.ReplaceAll(strings.Join(tt.want, "\n"), "FILE", filepath.Join(dir, ProjectFile))
			if err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
		})
	}
}

// The environment is shared with every other program: a RUNTASKS_
// variable that is neither a key nor documented is a warning, never an
// error; the documented ones (RUNTASKS_SESSION, RUNTASKS_BIN,
// RUNTASKS_CONFIG) are neither.
func TestLoadEnvWarnings(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"unknown variable", []string{"RUNTASKS_EPICS=x"},
			[]string{"env RUNTASKS_EPICS: unknown variable, ignored (did you mean RUNTASKS_EPIC?)"}},
		{"single underscore between sections", []string{"RUNTASKS_WORKFLOW_EPIC=x"},
			[]string{"env RUNTASKS_WORKFLOW_EPIC: unknown variable, ignored (did you mean RUNTASKS_WORKFLOW__EPIC?)"}},
		{"a section is not a key", []string{"RUNTASKS_WORKFLOW=x"},
			[]string{"env RUNTASKS_WORKFLOW: unknown variable, ignored"}},
		{"unknown variable, nothing close", []string{"RUNTASKS_COLOUR=red"},
			[]string{"env RUNTASKS_COLOUR: unknown variable, ignored"}},
		{"misspelt session", []string{"RUNTASKS_SESION=s1"},
			[]string{"env RUNTASKS_SESION: unknown variable, ignored (did you mean RUNTASKS_SESSION?)"}},
		{"the session-hook's RUNTASKS_SESSION", []string{"RUNTASKS_SESSION=s1"}, nil},
		{"the plugin's RUNTASKS_BIN", []string{"RUNTASKS_BIN=/usr/bin/runtasks"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgProject(t, "")
			var got []string
			cfg, _, err := Load(LoadOptions{StartDir: dir, Environ: tt.env, Warn: func(m string) { got = append(got, m) }})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("warnings:\n got %q\nwant %q", got, tt.want)
			}
			if cfg.Workflow.Epic != "" {
				t.Errorf("an ignored variable set workflow.epic to %q", cfg.Workflow.Epic)
			}
		})
	}
	// A typo in a file stays an error.
	dir := cfgProject(t, "workflow:\n  epics: x\n")
	if _, _, err := Load(LoadOptions{StartDir: dir, Environ: []string{"RUNTASKS_EPICS=x"}}); err == nil || !strings.Contains(err.Error(), "workflow.epics: unknown key") {
		t.Errorf("file typo: %v", err)
	}
}

// cfgFlags mirrors the flags a command declares.
func cfgFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("stop-hook", pflag.ContinueOnError)
	fs.String("epic", "", "")
	fs.Int("max-cycles", 0, "")
	fs.Bool("taskmaster", false, "")
	fs.String("bd", "", "")
	fs.String("state-dir", "", "")
	fs.String("log-level", "", "")
	fs.String("agent", "claude", "")
	fs.String("config", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestLoadFlags(t *testing.T) {
	const file = "workflow:\n  epic: bd-file\n  stop_hook:\n    max_cycles: 7\n"
	env := []string{"RUNTASKS_EPIC=bd-env", "RUNTASKS_BD=/env/bd", "RUNTASKS_LOG_LEVEL=info"}
	tests := []struct {
		name    string
		args    []string
		key     string
		want    any
		wantSrc string
	}{
		{"flag overrides env", []string{"--epic", "bd-flag"}, "workflow.epic", "bd-flag", "flag --epic"},
		{"flag overrides file", []string{"--max-cycles=8"}, "workflow.stop_hook.max_cycles", 8, "flag --max-cycles"},
		{"zero flag value still overrides", []string{"--max-cycles=0"}, "workflow.stop_hook.max_cycles", 0, "flag --max-cycles"},
		{"unchanged flag does not override env", nil, "beads.bin", "/env/bd", "env RUNTASKS_BD"},
		{"unchanged flag does not override file", []string{"--epic=x"}, "workflow.stop_hook.max_cycles", 7, "file"},
		{"unchanged flag does not override default", nil, "state.dir", ".runtasks", SourceDefault},
		{"bd", []string{"--bd", "/flag/bd"}, "beads.bin", "/flag/bd", "flag --bd"},
		{"state-dir", []string{"--state-dir", "/s"}, "state.dir", "/s", "flag --state-dir"},
		{"log-level", []string{"--log-level", "error"}, "log.level", "error", "flag --log-level"},
		{"taskmaster", []string{"--taskmaster"}, "workflow.done_token.required", true, "flag --taskmaster"},
		{"flags that are not keys are ignored", []string{"--agent", "codex", "--config", ""}, "workflow.epic", "bd-env", "env RUNTASKS_EPIC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgProject(t, file)
			cfg, src := cfgLoad(t, LoadOptions{StartDir: dir, Environ: env, Flags: cfgFlags(t, tt.args...)})
			got, _ := cfg.Value(tt.key)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.key, got, tt.want)
			}
			wantSrc := tt.wantSrc
			if wantSrc == "file" {
				wantSrc = filepath.Join(dir, ProjectFile)
			}
			if src[tt.key] != wantSrc {
				t.Errorf("source of %s = %q, want %q", tt.key, src[tt.key], wantSrc)
			}
		})
	}
}

func TestLoadFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-cycles=-2"}, "flag --max-cycles: workflow.stop_hook.max_cycles: must be 0 or more, got -2"},
		{[]string{"--log-level=loud"}, `flag --log-level: log.level: must be one of debug, info, warn, error, got "loud"`},
		{[]string{"--bd="}, "flag --bd: beads.bin: must not be empty"},
		{[]string{"--max-cycles=100001"}, "flag --max-cycles: workflow.stop_hook.max_cycles: must be at most 100000, got 100001"},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			_, _, err := Load(LoadOptions{StartDir: cfgProject(t, ""), Flags: cfgFlags(t, tt.args...)})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestLoadFlagKeysAreKeys(t *testing.T) {
	for flag, key := range FlagKeys {
		if !slices.Contains(cfgKeys, key) {
			t.Errorf("flag --%s sets unknown key %s", flag, key)
		}
	}
	for name, key := range EnvAliases {
		if !slices.Contains(cfgKeys, key) {
			t.Errorf("%s sets unknown key %s", name, key)
		}
	}
}

func TestLoadDiscovery(t *testing.T) {
	tests := []struct {
		name     string
		files    []string // created under the temp dir; a trailing / makes a directory
		start    string
		config   string   // LoadOptions.ConfigFile
		env      []string // RUNTASKS_CONFIG=..., with TMP for the temp dir
		repo     string   // a git repository's main work tree (MainWorktree), for starts inside it
		wantRoot string
		wantFile string
		wantErr  string
	}{
		{name: "walks up to .git", files: []string{"p/.git/", "p/a/b/"}, start: "p/a/b", wantRoot: "p"},
		{name: ".git may be a file (worktree)", files: []string{"p/.git", "p/a/"}, start: "p/a", wantRoot: "p"},
		{name: "walks up to .beads", files: []string{"p/.beads/", "p/a/"}, start: "p/a", wantRoot: "p"},
		{name: "walks up to project.yaml", files: []string{"p/project.yaml", "p/a/"}, start: "p/a", wantRoot: "p", wantFile: "p/project.yaml"},
		{name: "the start dir itself", files: []string{"p/.git/", "p/project.yaml"}, start: "p", wantRoot: "p", wantFile: "p/project.yaml"},
		{name: "nearest marker wins", files: []string{"p/.git/", "p/project.yaml", "p/sub/.beads/", "p/sub/x/"}, start: "p/sub/x", wantRoot: "p/sub"},
		{name: "project.yaml beside .git is read", files: []string{"p/.git/", "p/.beads/", "p/project.yaml", "p/a/"}, start: "p/a", wantRoot: "p", wantFile: "p/project.yaml"},
		{name: "explicit file", files: []string{"p/.git/", "p/project.yaml", "conf/other.yaml"}, start: "p", config: "TMP/conf/other.yaml", wantRoot: "conf", wantFile: "conf/other.yaml"},
		{name: "explicit file relative to the start dir", files: []string{"p/.git/", "p/cfg/my.yaml"}, start: "p", config: "cfg/my.yaml", wantRoot: "p/cfg", wantFile: "p/cfg/my.yaml"},
		{name: "RUNTASKS_CONFIG", files: []string{"p/.git/", "p/project.yaml", "conf/env.yaml"}, start: "p", env: []string{"RUNTASKS_CONFIG=TMP/conf/env.yaml"}, wantRoot: "conf", wantFile: "conf/env.yaml"},
		{name: "empty RUNTASKS_CONFIG is unset", files: []string{"p/.git/", "p/project.yaml"}, start: "p", env: []string{"RUNTASKS_CONFIG="}, wantRoot: "p", wantFile: "p/project.yaml"},
		{name: "--config beats RUNTASKS_CONFIG", files: []string{"conf/flag.yaml", "conf/env.yaml", "p/"}, start: "p", config: "TMP/conf/flag.yaml", env: []string{"RUNTASKS_CONFIG=TMP/conf/env.yaml"}, wantRoot: "conf", wantFile: "conf/flag.yaml"},
		{name: "missing --config file", files: []string{"p/.git/"}, start: "p", config: "TMP/nope.yaml", wantErr: "configuration file (--config): stat TMP/nope.yaml: no such file or directory"},
		{name: "missing RUNTASKS_CONFIG file", files: []string{"p/.git/"}, start: "p", env: []string{"RUNTASKS_CONFIG=TMP/nope.yaml"}, wantErr: "configuration file (env RUNTASKS_CONFIG): stat TMP/nope.yaml: no such file or directory"},
		{name: "--config a directory", files: []string{"p/.git/", "d/"}, start: "p", config: "TMP/d", wantErr: "configuration file (--config): TMP/d: not a regular file"},
		// One project per repository.
		{name: "a linked worktree is the main work tree's project", files: []string{"p/.git/", "p/project.yaml", "p/.worktrees/agent-x/.git", "p/.worktrees/agent-x/src/"},
			start: "p/.worktrees/agent-x/src", repo: "p", wantRoot: "p", wantFile: "p/project.yaml"},
		{name: "a project.yaml in a subdirectory of a repository is not the project's", files: []string{"p/.git/", "p/sub/project.yaml"},
			start: "p/sub", repo: "p", wantRoot: "p"},
		{name: "outside any repository: the upward search", files: []string{"q/project.yaml", "q/a/"}, start: "q/a", repo: "p", wantRoot: "q", wantFile: "q/project.yaml"},
		{name: "CLAUDE_PROJECT_DIR beats the cwd", files: []string{"proj/project.yaml", "other/.git/"}, start: "other", env: []string{"CLAUDE_PROJECT_DIR=TMP/proj"},
			wantRoot: "proj", wantFile: "proj/project.yaml"},
		{name: "CLAUDE_PROJECT_DIR outside a repository is the root itself", files: []string{"proj/sub/", "project.yaml"}, start: "proj/sub", env: []string{"CLAUDE_PROJECT_DIR=TMP/proj/sub"},
			wantRoot: "proj/sub"},
		{name: "CLAUDE_PROJECT_DIR in a linked worktree: the main work tree", files: []string{"p/.git/", "p/project.yaml", "p/.worktrees/agent-x/", "else/"},
			start: "else", env: []string{"CLAUDE_PROJECT_DIR=TMP/p/.worktrees/agent-x"}, repo: "p", wantRoot: "p", wantFile: "p/project.yaml"},
		{name: "a CLAUDE_PROJECT_DIR that does not exist is not used", files: []string{"p/.git/", "p/a/"}, start: "p/a", env: []string{"CLAUDE_PROJECT_DIR=TMP/gone"}, wantRoot: "p"},
		{name: "a start dir that does not exist is an error", files: []string{"p/.git/"}, start: "p/gone", wantErr: "find project: directory TMP/p/gone does not exist"},
		{name: "a start that is a file is an error", files: []string{"p/.git/", "p/f"}, start: "p/f", wantErr: "find project: TMP/p/f is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(tmp, f)
				if strings.HasSuffix(f, "/") {
					cfgMkdir(t, p)
				} else if strings.HasSuffix(f, ".yaml") {
					cfgWrite(t, p, "workflow:\n  epic: from-"+filepath.Base(f)+"\n")
				} else {
					cfgWrite(t, p, "gitdir: elsewhere\n")
				}
			}
			sub := func(s string) string { return strings.ReplaceAll(s, "TMP", tmp) }
			var env []string
			for _, e := range tt.env {
				env = append(env, sub(e))
			}
			opts := LoadOptions{StartDir: filepath.Join(tmp, tt.start), ConfigFile: sub(tt.config), Environ: env}
			if tt.repo != "" {
				main := filepath.Join(tmp, tt.repo)
				opts.MainWorktree = func(dir string) (string, bool, error) {
					if dir == main || strings.HasPrefix(dir, main+"/") {
						return main, true, nil
					}
					return "", false, nil
				}
			}
			cfg, _, err := Load(opts)
			if tt.wantErr != "" {
				if err == nil || err.Error() != sub(tt.wantErr) {
					t.Fatalf("error = %v, want %s", err, sub(tt.wantErr))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(tmp, tt.wantRoot); cfg.Root != want {
				t.Errorf("Root = %q, want %q", cfg.Root, want)
			}
			wantFile, wantEpic := "", ""
			if tt.wantFile != "" {
				wantFile = filepath.Join(tmp, tt.wantFile)
				wantEpic = "from-" + filepath.Base(tt.wantFile)
			}
			if cfg.File != wantFile {
				t.Errorf("File = %q, want %q", cfg.File, wantFile)
			}
			if cfg.Workflow.Epic != wantEpic {
				t.Errorf("epic = %q, want %q (the file read)", cfg.Workflow.Epic, wantEpic)
			}
			root, file, err := FindProject(opts)
			if err != nil || root != cfg.Root || file != cfg.File {
				t.Errorf("FindProject = %q, %q, %v; Load found %q, %q", root, file, err, cfg.Root, cfg.File)
			}
		})
	}
}

func TestLoadNoProjectFound(t *testing.T) {
	start := filepath.Join(t.TempDir(), "a", "b")
	cfgMkdir(t, start)
	for dir := start; ; dir = filepath.Dir(dir) {
		for _, m := range []string{ProjectFile, ".beads", ".git"} {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				t.Skipf("%s holds %s: the walk would stop there", dir, m)
			}
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	cfg, _ := cfgLoad(t, LoadOptions{StartDir: start})
	if cfg.Root != start || cfg.File != "" {
		t.Errorf("Root, File = %q, %q; want %q, \"\"", cfg.Root, cfg.File, start)
	}
	if got, want := cfg.StateDir(), filepath.Join(start, ".runtasks"); got != want {
		t.Errorf("StateDir = %q, want %q", got, want)
	}
}

func TestPromises(t *testing.T) {
	tests := []struct {
		name  string
		items []Promise
		want  []Promise
	}{
		{"documented texts", []Promise{{Text: "ALL TASKS COMPLETE"}, {Text: "EPIC COMPLETE"}, {Text: "BLOCKED - NEEDS USER"}, {Text: "CONTEXT LIMIT - CHECKPOINT"}},
			[]Promise{{"ALL TASKS COMPLETE", CondAllComplete}, {"EPIC COMPLETE", CondAllComplete}, {"BLOCKED - NEEDS USER", CondAllBlocked}, {"CONTEXT LIMIT - CHECKPOINT", CondContextCheckpoint}}},
		{"other text needs beads to agree", []Promise{{Text: "SHIPPED IT"}}, []Promise{{"SHIPPED IT", CondAllComplete}}},
		{"known text in another case", []Promise{{Text: "blocked - needs user"}}, []Promise{{"blocked - needs user", CondAllBlocked}}},
		{"condition given", []Promise{{Text: "WAITING", Condition: "all_blocked"}}, []Promise{{"WAITING", CondAllBlocked}}},
		{"condition overrides the known one", []Promise{{Text: "EPIC COMPLETE", Condition: "always"}}, []Promise{{"EPIC COMPLETE", CondAlways}}},
		{"blank dropped, text trimmed", []Promise{{Text: " "}, {Condition: "always"}, {Text: " DONE "}}, []Promise{{"DONE", CondAllComplete}}},
		{"none", nil, []Promise{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Workflow: Workflow{StopHook: StopHook{CompletionPromises: tt.items}}}
			if got := c.Promises(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Promises = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestAllowsExitOn(t *testing.T) {
	c := &Config{Workflow: Workflow{StopHook: StopHook{AllowExitOn: []string{CondAllComplete, CondContextCheckpoint}}}}
	for cond, want := range map[string]bool{CondAllComplete: true, CondContextCheckpoint: true, CondAllBlocked: false, CondAlways: false, "": false} {
		if got := c.AllowsExitOn(cond); got != want {
			t.Errorf("AllowsExitOn(%q) = %v, want %v", cond, got, want)
		}
	}
}

func TestConfigDirs(t *testing.T) {
	tests := []struct {
		root, state, beads string
		wantState          string
		wantBeads          string
	}{
		{"/proj", ".runtasks", "", "/proj/.runtasks", ""},
		{"/proj", "/var/state", "/srv/.beads", "/var/state", "/srv/.beads"},
		{"/proj", "../shared/state", "store/.beads", "/shared/state", "/proj/store/.beads"},
	}
	for _, tt := range tests {
		c := &Config{Root: tt.root, State: StateDir{Dir: tt.state}, Beads: Beads{Dir: tt.beads}}
		if got := c.StateDir(); got != tt.wantState {
			t.Errorf("StateDir(%q in %q) = %q, want %q", tt.state, tt.root, got, tt.wantState)
		}
		if got := c.BeadsDir(); got != tt.wantBeads {
			t.Errorf("BeadsDir(%q in %q) = %q, want %q", tt.beads, tt.root, got, tt.wantBeads)
		}
	}
}

func TestConfigValue(t *testing.T) {
	cfg := cfgDefaults("/p")
	for key, want := range map[string]any{
		"workflow.stop_hook.max_cycles": 50,
		"beads.timeout":                 10 * time.Second,
		"beads.max_processes":           4,
		"beads.queue_timeout":           60 * time.Second,
		"log.level":                     "warn",
		"workflow.done_token.required":  false,
	} {
		if got, ok := cfg.Value(key); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Value(%s) = %#v, %v; want %#v", key, got, ok, want)
		}
	}
	for _, key := range []string{"workflow", "workflow.stop_hook", "nope", ""} {
		if _, ok := cfg.Value(key); ok {
			t.Errorf("Value(%q) found a value; want none", key)
		}
	}
}

func TestConfigKeysCoverTheStruct(t *testing.T) {
	keys := ConfigKeys()
	for _, want := range []string{"workflow.epic", "workflow.stop_hook.completion_promises", "workflow.done_token.prefix", "beads.timeout", "state.dir", "log.file", "prompts.run_tasks"} {
		if !slices.Contains(keys, want) {
			t.Errorf("ConfigKeys lacks %s", want)
		}
	}
	if len(keys) != 53 {
		t.Errorf("ConfigKeys has %d keys, want 53 (a new field? give it its default in Defaults() and document it in project.yaml.example and docs/configuration.md): %v", len(keys), keys)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 2 * time.Hour: "2h", 90 * time.Minute: "1h30m", 10 * time.Second: "10s",
		90 * time.Second: "1m30s", time.Hour + time.Second: "1h0m1s", 1500 * time.Millisecond: "1.5s", -time.Hour: "-1h",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestProjectYAMLExample: the example documents every key, each with a
// comment, and loads cleanly.
func TestProjectYAMLExample(t *testing.T) {
	path := cfgAbs(t, "../../project.yaml.example")
	if err := ValidateYAML(path, cfgRead(t, path)); err != nil {
		t.Fatalf("ValidateYAML: %v", err)
	}
	cfg, src := cfgLoad(t, LoadOptions{ConfigFile: path})
	for _, k := range ConfigKeys() {
		if src[k] != path {
			t.Errorf("the example does not set %s", k)
		}
	}
	// The example shows the defaults.
	want := cfgDefaults(filepath.Dir(path))
	want.File = path
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("the example's values are not the defaults:\n got %#v\nwant %#v", *cfg, want)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yamlv3.Node, prefix string)
	walk = func(n *yamlv3.Node, prefix string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := strings.TrimPrefix(prefix+"."+k.Value, ".")
			if strings.TrimSpace(k.HeadComment) == "" && strings.TrimSpace(k.LineComment) == "" {
				t.Errorf("the example's %s (line %d) has no comment", key, k.Line)
			}
			if v.Kind == yamlv3.MappingNode && cfgField(key).Type.Kind() == reflect.Struct {
				walk(v, key)
			}
		}
	}
	walk(doc.Content[0], "")
}

// TestRangesDocumented: every number has a range, and
// docs/configuration.md gives it in the key's row.
func TestRangesDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // the first cell's key -> the row
	for _, line := range strings.Split(string(data), "\n") {
		if key, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "`"); ok && strings.HasPrefix(line, "| `") {
			rows[key] = line
		}
	}
	cfg := cfgDefaults("/p")
	for _, key := range ConfigKeys() {
		v, _ := cfg.Value(key)
		switch v.(type) {
		case int, time.Duration:
		default:
			continue
		}
		r := cfgRangeText(cfgField(key).Tag.Get("rule"))
		if r == "" {
			t.Errorf("%s is a number without a range", key)
			continue
		}
		row := rows[key]
		if row == "" {
			row = rows[strings.TrimPrefix(key, "workflow.stop_hook.")]
		}
		if want := "Range: " + r + "."; !strings.Contains(row, want) {
			t.Errorf("docs/configuration.md: the row of %s lacks %q: %q", key, want, row)
		}
	}
	for _, opt := range []string{"timeout", "tail_lines"} {
		f, _ := reflect.TypeFor[CheckSpec]().FieldByName(map[string]string{"timeout": "Timeout", "tail_lines": "TailLines"}[opt])
		r := cfgRangeText(f.Tag.Get("rule"))
		if want := "range: " + r; r == "" || !strings.Contains(rows["command"], want) {
			t.Errorf("docs/configuration.md: the command checker's %s lacks %q: %q", opt, want, rows["command"])
		}
	}
}

// cfgRangeText is a range rule as docs/configuration.md writes it: "0 to
// 50", "0s to 720h", "more than 0s, at most 1h"; "" when it is no range.
func cfgRangeText(rule string) string {
	lo, hi, ok := strings.Cut(rule, "..")
	switch {
	case !ok:
		return ""
	case strings.HasPrefix(lo, ">"):
		return "more than " + lo[1:] + ", at most " + hi
	}
	return lo + " to " + hi
}

// TestLoadProblemsNameTheirLayer: every problem names its key and its
// layer: the file and the line, the variable, or the flag; an unknown key
// comes with the nearest known one.
func TestLoadProblemsNameTheirLayer(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  []string
		args []string
		want []KeyError // Source FILE = the project.yaml
	}{
		{name: "unknown key, with its line and the nearest key",
			file: "workflow:\n  epic: bd-e\n  stop_hook:\n    max_cycles: 5\n    alow_exit_on: [always]\n",
			want: []KeyError{{"FILE", 5, "workflow.stop_hook.alow_exit_on", "unknown key (did you mean allow_exit_on?)"}}},
		{name: "unknown section",
			file: "workflow:\n  epic: bd-e\nbead:\n  bin: bd\n",
			want: []KeyError{{"FILE", 3, "bead", "unknown key (did you mean beads?)"}}},
		{name: "wrong type in the file, in a list item",
			file: "workflow:\n  notify:\n    - run: echo\n      events: [complete]\n      timeout: 5\n",
			want: []KeyError{{"FILE", 5, "workflow.notify[0].timeout", `expected a duration such as "90s" or "2h", got number 5`}}},
		{name: "wrong type in the environment",
			env:  []string{"RUNTASKS_WORKFLOW__STOP_HOOK__CHECK_IN_PROGRESS=yes please"},
			want: []KeyError{{"env RUNTASKS_WORKFLOW__STOP_HOOK__CHECK_IN_PROGRESS", 0, "workflow.stop_hook.check_in_progress", `expected true or false, got string "yes please"`}}},
		{name: "an empty RUNTASKS_MAX_CYCLES names the variable",
			env:  []string{"RUNTASKS_MAX_CYCLES="},
			want: []KeyError{{"env RUNTASKS_MAX_CYCLES", 0, "workflow.stop_hook.max_cycles", `expected an integer, got string ""`}}},
		{name: "an empty alias of a text key that must not be empty",
			env:  []string{"RUNTASKS_STATE_DIR="},
			want: []KeyError{{"env RUNTASKS_STATE_DIR", 0, "state.dir", "must not be empty"}}},
		{name: "a wrong value from a flag",
			args: []string{"--log-level", "loud"},
			want: []KeyError{{"flag --log-level", 0, "log.level", `must be one of debug, info, warn, error, got "loud"`}}},
		{name: "every layer at once, lowest first",
			file: "log:\n  level: loud\n", env: []string{"RUNTASKS_BEADS__TIMEOUT=0"}, args: []string{"--max-cycles=-1"},
			want: []KeyError{
				{"FILE", 2, "log.level", `must be one of debug, info, warn, error, got "loud"`},
				{"env RUNTASKS_BEADS__TIMEOUT", 0, "beads.timeout", "must be more than 0, got 0s"},
				{"flag --max-cycles", 0, "workflow.stop_hook.max_cycles", "must be 0 or more, got -1"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgProject(t, tt.file)
			_, _, err := Load(LoadOptions{StartDir: dir, Environ: tt.env, Flags: cfgFlags(t, tt.args...)})
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Load error = %v, want an ErrorList", err)
			}
			var got []KeyError
			for _, e := range list {
				got = append(got, *e)
			}
			for i := range tt.want {
				if tt.want[i].Source == "FILE" {
					tt.want[i].Source = filepath.Join(dir, ProjectFile)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestLoadListReplacedWhole: a list in a higher layer replaces the list
// below it whole, whatever their lengths, and the source is the layer's.
func TestLoadListReplacedWhole(t *testing.T) {
	const file = "workflow:\n  stop_hook:\n    allow_exit_on: [always, all_blocked, all_complete, context_checkpoint]\n" +
		"    completion_promises: [A, B, C, D, E]\n  checks: [beads, plan, results]\n"
	tests := []struct {
		name    string
		file    string
		env     []string
		key     string
		want    any
		wantSrc string // FILE = the project.yaml
	}{
		{"the file's shorter list over the defaults", "workflow:\n  stop_hook:\n    allow_exit_on: [always]\n", nil,
			"workflow.stop_hook.allow_exit_on", []string{CondAlways}, "FILE"},
		{"the file's longer list over the defaults", file, nil,
			"workflow.stop_hook.allow_exit_on", []string{CondAlways, CondAllBlocked, CondAllComplete, CondContextCheckpoint}, "FILE"},
		{"a shorter list from the environment", file, []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON=all_blocked"},
			"workflow.stop_hook.allow_exit_on", []string{CondAllBlocked}, "env RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON"},
		{"an empty list from the environment", file, []string{"RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES="},
			"workflow.stop_hook.completion_promises", []Promise{}, "env RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES"},
		{"promises, one over five", file, []string{"RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES=Z"},
			"workflow.stop_hook.completion_promises", []Promise{{Text: "Z"}}, "env RUNTASKS_WORKFLOW__STOP_HOOK__COMPLETION_PROMISES"},
		{"checks, one over three", file, []string{"RUNTASKS_WORKFLOW__CHECKS=promise"},
			"workflow.checks", []CheckSpec{{Type: "promise"}}, "env RUNTASKS_WORKFLOW__CHECKS"},
		{"the file's list when the environment sets none", file, []string{"RUNTASKS_EPIC=x"},
			"workflow.checks", []CheckSpec{{Type: "beads"}, {Type: "plan"}, {Type: "results"}}, "FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgProject(t, tt.file)
			cfg, src := cfgLoad(t, LoadOptions{StartDir: dir, Environ: tt.env})
			if got, _ := cfg.Value(tt.key); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.key, got, tt.want)
			}
			if want := strings.ReplaceAll(tt.wantSrc, "FILE", filepath.Join(dir, ProjectFile)); src[tt.key] != want {
				t.Errorf("source of %s = %q, want %q", tt.key, src[tt.key], want)
			}
		})
	}
}

func cfgRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
