package config

import (
	"cmp"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	kmaps "github.com/knadh/koanf/maps"

	"github.com/runtasks/runtasks/internal/usage"
)

// Promise conditions: what beads (or git) must say for a <promise> to be accepted.
const (
	CondAllComplete       = "all_complete"
	CondAllBlocked        = "all_blocked"
	CondContextCheckpoint = "context_checkpoint"
	CondAlways            = "always"
)

// Config is runtasks' whole configuration, after every layer is merged
// (defaults, project.yaml, RUNTASKS_* environment, flags).
type Config struct {
	Workflow Workflow    `koanf:"workflow"`
	Beads    Beads       `koanf:"beads"`
	State    StateDir    `koanf:"state"`
	Log      Log         `koanf:"log"`
	Prompts  Prompts     `koanf:"prompts"`
	Claim    Claim       `koanf:"claim"`
	Run      Run         `koanf:"run"`
	Usage    UsageConfig `koanf:"usage"`

	// Root and File are the project root and the project.yaml read, if any.
	Root, File string `koanf:"-"`
	// Untrusted is the project.yaml left out for want of trust (LoadOptions.RequireTrust).
	Untrusted *UntrustedFile `koanf:"-"`
}

// Sources maps each configuration key to the layer that set its value:
// SourceDefault, the project.yaml path, "env NAME" or "flag --name".
type Sources map[string]string

// Of is the layer that set key ("the configuration" when unknown).
func (s *Sources) Of(key string) string {
	if s != nil && (*s)[key] != "" {
		return (*s)[key]
	}
	return "the configuration"
}

// SourceDefault is the source of a value no layer overrode.
const SourceDefault = "default"

// KeyError is one problem in one layer: its Source (the file, "env NAME" or
// "flag --name"), the file's Line (0: none), the Key (workflow.checks[1].run;
// "": none) and what is wrong.
type KeyError struct {
	Source string `json:"source"`
	Line   int    `json:"line,omitempty"`
	Key    string `json:"key,omitempty"`
	Msg    string `json:"msg"`
}

func (e *KeyError) Error() string {
	s := e.Source
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		s += ": " + e.Key
	}
	return s + ": " + e.Msg
}

// ErrorList is every problem Load or a Validate function found, one a line.
type ErrorList []*KeyError

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// The keys' meanings are in docs/configuration.md. A rule tag is checked on
// the decoded value (cfgRule); every number has a range.

type Workflow struct {
	Epic             string        `koanf:"epic"`
	StopHook         StopHook      `koanf:"stop_hook"`
	DoneToken        DoneToken     `koanf:"done_token"`
	NoProgressCycles int           `koanf:"no_progress_cycles" rule:"0..1000"`
	StuckAfter       time.Duration `koanf:"stuck_after" rule:"0s..720h"`
	MaxDuration      time.Duration `koanf:"max_duration" rule:"0s..720h"`
	StuckAction      string        `koanf:"stuck_action" rule:"block|reopen|report"`
	Worktrees        Worktrees     `koanf:"worktrees"`
	// Checks are the completion checkers as written (empty: the built-in
	// chain beads, promise, done_token); the engine runs them.
	Checks        []CheckSpec `koanf:"checks"`
	FeedbackLimit int         `koanf:"feedback_limit" rule:"0..1000"`
	Budget        Budget      `koanf:"budget"`
	Notify        []Notify    `koanf:"notify"`
	Verify        Verify      `koanf:"verify"`
}

// Verify is what a task must pass to be closed (docs/checkers.md): Checks,
// or the first override naming the task's issue type or one of its labels;
// then the task's own command (bd metadata key verify).
type Verify struct {
	Checks       []CheckSpec      `koanf:"checks"`
	Overrides    []VerifyOverride `koanf:"overrides"`
	OnUnverified string           `koanf:"on_unverified" rule:"reopen|block|warn"`
	MaxPerStop   int              `koanf:"max_per_stop" rule:"1..100"`
	// TaskCommands runs each task's own check (bd metadata verify): whoever
	// can write the beads store then chooses a command that runs here.
	TaskCommands bool `koanf:"task_commands"`
}

// VerifyOverride replaces workflow.verify.checks for tasks of IssueType or with Label.
type VerifyOverride struct {
	IssueType string      `koanf:"issue_type" json:"issue_type,omitempty"`
	Label     string      `koanf:"label" json:"label,omitempty"`
	Checks    []CheckSpec `koanf:"checks" json:"checks"`
}

// On reports whether workflow.verify is set: closes are gated and audited.
func (v Verify) On() bool { return len(v.Checks) > 0 || len(v.Overrides) > 0 }

// Budget limits what a session's loop since it was armed, or every loop
// on the epic, may spend (0: no limit).
type Budget struct {
	SessionTokens int     `koanf:"session_tokens" rule:"0..1000000000000"`
	SessionCost   float64 `koanf:"session_cost" rule:"0..1e+09"`
	EpicTokens    int     `koanf:"epic_tokens" rule:"0..1000000000000"`
	EpicCost      float64 `koanf:"epic_cost" rule:"0..1e+09"`
}

// Notify is one workflow.notify command, run detached for each of Events
// within Timeout (0: NotifyTimeout).
type Notify struct {
	Run     string        `koanf:"run" json:"run" rule:"nonempty"`
	Events  []string      `koanf:"events" json:"events" rule:"required,event"`
	Timeout time.Duration `koanf:"timeout" json:"timeout,omitempty" rule:"0s..1h"`
}

// Worktrees.Pattern is a task's worktree path relative to the project root ({id}: the task).
type Worktrees struct {
	Pattern string `koanf:"pattern" rule:"nonempty"`
}

// Claim configures task claiming and session arming: Patterns and
// ArmPatterns recognise a request in a prompt (the group named id, or the
// first, is the id).
type Claim struct {
	Patterns    []string `koanf:"patterns" rule:"regexp"`
	ArmPatterns []string `koanf:"arm_patterns" rule:"regexp"`
	RunsDir     string   `koanf:"runs_dir" rule:"nonempty"`
	Templates   string   `koanf:"templates"`
	Actor       string   `koanf:"actor"`
}

// Run configures runtasks run, the headless loop driver.
type Run struct {
	Agent     string `koanf:"agent" rule:"claude|codex"`
	Session   string `koanf:"session" rule:"fresh|resume"`
	ClaudeBin string `koanf:"claude_bin" rule:"nonempty"`
	CodexBin  string `koanf:"codex_bin" rule:"nonempty"`
	Dir       string `koanf:"dir" rule:"nonempty"` // relative to the state dir
	// MaxTaskFailures: a task whose agent failed this many times is quarantined (runtasks run --workers).
	MaxTaskFailures int `koanf:"max_task_failures" rule:"1..100"`
	// MaxMergeFailures is how many conflicting merges of a task --workers
	// try before it needs a person.
	MaxMergeFailures int `koanf:"max_merge_failures" rule:"1..100"`
}

type StopHook struct {
	Enabled         bool     `koanf:"enabled"`
	CheckReadyTasks bool     `koanf:"check_ready_tasks"`
	CheckInProgress bool     `koanf:"check_in_progress"`
	MaxCycles       int      `koanf:"max_cycles" rule:"0..100000"`
	AllowExitOn     []string `koanf:"allow_exit_on" rule:"condition"`
	// CompletionPromises as written (a string sets Text only); Promises() resolves them.
	CompletionPromises      []Promise `koanf:"completion_promises"`
	OnBeadsError            string    `koanf:"on_beads_error" rule:"allow|block"`
	SubagentStop            string    `koanf:"subagent_stop" rule:"allow|drive"`
	CheckpointRequiresClean bool      `koanf:"checkpoint_requires_clean"`
	NextIDs                 int       `koanf:"next_ids" rule:"0..50"`
}

type DoneToken struct {
	Required bool   `koanf:"required"`
	Prefix   string `koanf:"prefix" rule:"nonempty"`
	Max      int    `koanf:"max" rule:"0..100000"`
}

type Beads struct {
	Bin     string        `koanf:"bin" rule:"nonempty"`
	Dir     string        `koanf:"dir"`
	Timeout time.Duration `koanf:"timeout" rule:">0s..1h"`
	// MaxProcesses bounds the user's bd processes on this machine at once.
	MaxProcesses int           `koanf:"max_processes" rule:"1..256"`
	QueueTimeout time.Duration `koanf:"queue_timeout" rule:">0s..1h"`
}

type StateDir struct {
	Dir string `koanf:"dir" rule:"nonempty"`
}

type Log struct {
	File  string `koanf:"file"`
	Level string `koanf:"level" rule:"debug|info|warn|error"`
}

type Prompts struct {
	RunTasks string `koanf:"run_tasks"`
}

// Promise is a completion promise with the condition that makes it true
// ("" until resolved: see Config.Promises).
type Promise struct {
	Text      string `koanf:"text" json:"text" rule:"nonempty"`
	Condition string `koanf:"condition" json:"condition" rule:"|condition"`
}

// CheckSpec is one workflow.checks item: the checker's type, its name (""
// = the type) and the options of its type (checkOptions, docs/checkers.md).
type CheckSpec struct {
	Type      string        `koanf:"type"`
	Name      string        `koanf:"name"`
	Texts     []string      `koanf:"texts" rule:"nonempty"` // promise
	Prefix    string        `koanf:"prefix"`                // done_token
	Run       string        `koanf:"run" rule:"nonempty"`   // command
	Dir       string        `koanf:"dir"`
	Timeout   time.Duration `koanf:"timeout" rule:">0s..24h"`
	TailLines int           `koanf:"tail_lines" rule:"0..10000"`
	Paths     []string      `koanf:"paths" rule:"required,nonempty"` // files
	NonEmpty  bool          `koanf:"non_empty"`
	Template  string        `koanf:"template"`
	Required  bool          `koanf:"required"`                       // plan
	Mode      string        `koanf:"mode" rule:"|all_must_pass|any"` // composite
	Checks    []CheckSpec   `koanf:"checks" rule:"required"`
}

// UsageConfig.Prices are a project's own prices per model, checked before
// the shipped table (usage.Prices), first match wins.
type UsageConfig struct {
	Prices []usage.Price `koanf:"prices"`
}

// NotifyEvents are the events a workflow.notify command can ask for.
var NotifyEvents = []string{"complete", "needs_person", "cap_reached", "no_progress", "beads_error", "budget", "self_disarm", "reopened"}

// NotifyEnvNames are the variables a notify command gets (notify.Event.Env):
// the environment layer ignores them, so that it can run runtasks itself.
var NotifyEnvNames = []string{"RUNTASKS_EVENT", "RUNTASKS_OUTCOME", "RUNTASKS_SESSION", "RUNTASKS_AGENT",
	"RUNTASKS_CYCLE", "RUNTASKS_WHY", "RUNTASKS_MESSAGE", "RUNTASKS_SUMMARY", "RUNTASKS_PROJECT",
	"RUNTASKS_TOKENS", "RUNTASKS_COST"}

// NotifyTimeout is a notify command's time limit when none is given.
const NotifyTimeout = 30 * time.Second

var CheckTypes = []string{"beads", "promise", "done_token", "command", "files", "plan", "results", "composite"}

// checkOptions lists each checker's options besides type and name;
// checkDefaults the values of those it may leave out.
var (
	checkOptions = map[string][]string{
		"promise":    {"texts"},
		"done_token": {"prefix"},
		"command":    {"dir", "run", "tail_lines", "timeout"},
		"files":      {"non_empty", "paths", "template"},
		"plan":       {"required"},
		"composite":  {"checks", "mode"},
	}
	checkDefaults = map[string]map[string]any{
		"command":   {"timeout": DefaultCheckTimeout, "tail_lines": 20},
		"composite": {"mode": "all_must_pass"},
	}
)

// DefaultCheckTimeout is a command check's timeout when it names none.
const DefaultCheckTimeout = 10 * time.Minute

// MarshalJSON writes the spec as project.yaml could: the bare type, or an
// object with the options of its type that are set.
func (s CheckSpec) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": s.Type}
	v := reflect.ValueOf(s)
	for _, f := range reflect.VisibleFields(v.Type()) {
		opt, fv := f.Tag.Get("koanf"), v.FieldByIndex(f.Index)
		if (opt == "name" || slices.Contains(checkOptions[s.Type], opt)) && !fv.IsZero() {
			m[opt] = fv.Interface()
			if d, ok := m[opt].(time.Duration); ok {
				m[opt] = FormatDuration(d)
			}
		}
	}
	if len(m) == 1 {
		return json.Marshal(s.Type)
	}
	return json.Marshal(m)
}

const cfgEnvPrefix = "RUNTASKS_"

// FlagKeys maps command-line flags to the keys they set (when changed).
var FlagKeys = map[string]string{
	"epic":         "workflow.epic",
	"max-cycles":   "workflow.stop_hook.max_cycles",
	"max-duration": "workflow.max_duration",
	"log-level":    "log.level",
	"bd":           "beads.bin",
	"state-dir":    "state.dir",
	"taskmaster":   "workflow.done_token.required",
}

// EnvAliases maps short variables to the keys they set, besides every key's
// long form (EnvName). The long form wins over a RUNTASKS_ alias, which wins
// over a TASKMASTER_ one.
var EnvAliases = map[string]string{
	"RUNTASKS_EPIC":          "workflow.epic",
	"RUNTASKS_BD":            "beads.bin",
	"RUNTASKS_BEADS_DIR":     "beads.dir",
	"RUNTASKS_STATE_DIR":     "state.dir",
	"RUNTASKS_LOG_LEVEL":     "log.level",
	"RUNTASKS_LOG_FILE":      "log.file",
	"RUNTASKS_MAX_CYCLES":    "workflow.stop_hook.max_cycles",
	"TASKMASTER_DONE_PREFIX": "workflow.done_token.prefix",
	"TASKMASTER_MAX":         "workflow.done_token.max",
}

// envVars are the RUNTASKS_ variables runtasks reads that are not keys:
// the project.yaml to read, the agent session a command acts for, the
// binary the plugin's hook script runs, a runtasks run worker's task.
var envVars = []string{EnvConfig, "RUNTASKS_SESSION", "RUNTASKS_BIN", "RUNTASKS_TASK"}

// EnvName is the long environment variable of a key:
// workflow.stop_hook.max_cycles -> RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES.
func EnvName(key string) string {
	return cfgEnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// EnvKey is the key a long RUNTASKS_ variable names (it may not exist).
func EnvKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, cfgEnvPrefix), "__", "."))
}

var Conditions = []string{CondAllComplete, CondAllBlocked, CondContextCheckpoint, CondAlways}

// Defaults is the lowest layer and the only statement of the defaults (a
// fresh value at each call).
func Defaults() Config {
	return Config{
		Workflow: Workflow{
			StopHook: StopHook{
				Enabled: true, CheckReadyTasks: true, CheckInProgress: true, MaxCycles: 50,
				AllowExitOn: []string{CondAllComplete, CondAllBlocked, CondContextCheckpoint},
				CompletionPromises: []Promise{{Text: "ALL TASKS COMPLETE"}, {Text: "EPIC COMPLETE"},
					{Text: "BLOCKED - NEEDS USER"}, {Text: "CONTEXT LIMIT - CHECKPOINT"}},
				OnBeadsError: "allow", SubagentStop: "allow", CheckpointRequiresClean: true, NextIDs: 3,
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
		Beads: Beads{Bin: "bd", Timeout: 10 * time.Second, MaxProcesses: 4, QueueTimeout: time.Minute},
		State: StateDir{Dir: DefaultStateDir},
		Log:   Log{Level: "warn"},
		Claim: Claim{
			Patterns:    []string{`(?i)^\s*/?(?:claim|select|start|work on|pick up)\s+(?P<id>[A-Za-z0-9][A-Za-z0-9_-]*-[A-Za-z0-9][A-Za-z0-9._-]*)\b`},
			ArmPatterns: []string{`(?i)^\s*/(?:runtasks:)?run-tasks\s+(?P<id>[A-Za-z0-9][A-Za-z0-9_-]*-[A-Za-z0-9][A-Za-z0-9._-]*)\b`},
			RunsDir:     "runs",
		},
		Run:   Run{Agent: "claude", Session: "fresh", ClaudeBin: "claude", CodexBin: "codex", Dir: "runs", MaxMergeFailures: 2, MaxTaskFailures: 2},
		Usage: UsageConfig{Prices: []usage.Price{}},
	}
}

// Promises resolves completion_promises: a promise without a condition
// takes that of the documented text it names (cfgKnownPromises), else
// all_complete, so that beads must agree.
func (c *Config) Promises() []Promise {
	out := make([]Promise, 0, len(c.Workflow.StopHook.CompletionPromises))
	for _, p := range c.Workflow.StopHook.CompletionPromises {
		if p.Text = strings.TrimSpace(p.Text); p.Text == "" {
			continue
		}
		if p.Condition == "" {
			p.Condition = cmp.Or(cfgKnownPromises[strings.ToUpper(p.Text)], CondAllComplete)
		}
		out = append(out, p)
	}
	return out
}

// cfgKnownPromises gives the documented promise texts their conditions.
var cfgKnownPromises = map[string]string{
	"ALL TASKS COMPLETE":         CondAllComplete,
	"EPIC COMPLETE":              CondAllComplete,
	"BLOCKED - NEEDS USER":       CondAllBlocked,
	"CONTEXT LIMIT - CHECKPOINT": CondContextCheckpoint,
}

func (c *Config) AllowsExitOn(cond string) bool {
	return slices.Contains(c.Workflow.StopHook.AllowExitOn, cond)
}

// StateDir is state.dir as an absolute path (relative to the project root).
func (c *Config) StateDir() string { return c.Path(cmp.Or(c.State.Dir, ".")) }

// BeadsDir is beads.dir as an absolute path; "" when unset (bd searches
// from the project root upwards).
func (c *Config) BeadsDir() string { return c.Path(c.Beads.Dir) }

// ConfigKeys lists every configuration key (the leaves), sorted.
func ConfigKeys() []string {
	return slices.Clone(cfgKeys)
}

func (c *Config) Value(key string) (any, bool) {
	if !slices.Contains(cfgKeys, key) {
		return nil, false
	}
	return kmaps.Search(cfgMap(c), strings.Split(key, ".")), true
}

// FormatDuration writes d in Go syntax without zero units: 2h, 1h30m, 10s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Path is a path of the configuration, absolute: a relative one is
// relative to the project root; "" stays "".
func (c *Config) Path(p string) string {
	if p == "" {
		return ""
	} else if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	root := c.Root
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return filepath.Join(root, p)
}
