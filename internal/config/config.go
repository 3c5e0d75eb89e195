package config

import (
	"path/filepath"
	"time"
)

// Promise conditions: what beads (or git) must say for a <promise> to be
// accepted.
const (
	CondAllComplete       = "all_complete"
	CondAllBlocked        = "all_blocked"
	CondContextCheckpoint = "context_checkpoint"
	CondAlways            = "always"
)

// Config is runtasks' whole configuration, after every layer is merged
// (defaults, project.yaml, RUNTASKS_* environment, flags).
type Config struct {
	Workflow Workflow `koanf:"workflow"`
	Beads    Beads    `koanf:"beads"`
	State    StateDir `koanf:"state"`
	Log      Log      `koanf:"log"`
	Prompts  Prompts  `koanf:"prompts"`
	Claim    Claim    `koanf:"claim"`
	Run      Run      `koanf:"run"`
	// Usage prices the tokens recorded at each stop.
	Usage UsageConfig `koanf:"usage"`

	// Root is the project root (not a key: found while loading).
	Root string `koanf:"-"`
	// File is the project.yaml that was read, if any (not a key).
	File string `koanf:"-"`
	// Untrusted is the project.yaml that was found but left out because it
	// is not trusted (LoadOptions.RequireTrust); nil otherwise.
	Untrusted *UntrustedFile `koanf:"-"`
}

type Workflow struct {
	// Epic drives sessions when no session is armed for another epic.
	Epic      string    `koanf:"epic"`
	StopHook  StopHook  `koanf:"stop_hook"`
	DoneToken DoneToken `koanf:"done_token"`
	// NoProgressCycles: blocks in a row with an unchanged beads snapshot
	// before runtasks escalates (0 turns the rule off).
	NoProgressCycles int `koanf:"no_progress_cycles"`
	// StuckAfter: an in-progress task started longer ago is stuck.
	StuckAfter time.Duration `koanf:"stuck_after"`
	// MaxDuration: time since the first block after which checks are skipped
	// and the stop allowed (0 = no limit).
	MaxDuration time.Duration `koanf:"max_duration"`
	// StuckAction: what happens to a stuck in-progress task: block (set its
	// status to blocked with a note), reopen (back to open) or report.
	StuckAction string    `koanf:"stuck_action"`
	Worktrees   Worktrees `koanf:"worktrees"`
	// Checks lists the completion checkers in order, as written: a name
	// or {type, …options}. Empty means the stop hook's plain rules (the
	// built-in chain beads, promise, done_token). engine.Checkers builds them.
	Checks []CheckSpec `koanf:"checks"`
	// FeedbackLimit: items a checker's feedback names before "and N more".
	FeedbackLimit int `koanf:"feedback_limit"`
	// Budget: tokens and cost after which the stop is allowed as an
	// escalation (0 = no limit).
	Budget Budget `koanf:"budget"`
	// Notify lists commands run when a loop needs a person or ends.
	Notify []Notify `koanf:"notify"`
}

// Budget limits what a loop may spend. Session limits count the session's
// loop since it was armed; epic limits count every session's loop on the
// epic. 0 is no limit.
type Budget struct {
	SessionTokens int     `koanf:"session_tokens"`
	SessionCost   float64 `koanf:"session_cost"`
	EpicTokens    int     `koanf:"epic_tokens"`
	EpicCost      float64 `koanf:"epic_cost"`
}

// Notify is one workflow.notify command: Run (a shell command) is started
// for each of Events, detached, within Timeout (0: NotifyTimeout).
type Notify struct {
	Run     string        `koanf:"run" json:"run"`
	Events  []string      `koanf:"events" json:"events"`
	Timeout time.Duration `koanf:"timeout" json:"timeout,omitempty"`
}

// Worktrees says where the orchestrator works tasks.
type Worktrees struct {
	// Pattern is a task's worktree path relative to the project root;
	// {id} is the task id.
	Pattern string `koanf:"pattern"`
}

// Claim configures task claiming and session arming (runtasks claim, the
// prompt hook).
type Claim struct {
	// Patterns are regular expressions recognising a claim in a prompt;
	// the group named id (or the first group) is the task id.
	Patterns []string `koanf:"patterns"`
	// ArmPatterns recognise a request to drive the session for an epic.
	ArmPatterns []string `koanf:"arm_patterns"`
	// RunsDir holds the run folders, relative to the project root.
	RunsDir string `koanf:"runs_dir"`
	// Templates overrides the embedded run-folder templates (a directory).
	Templates string `koanf:"templates"`
	// Actor is the beads actor for claims (default: bd's, from git).
	Actor string `koanf:"actor"`
}

// Run configures runtasks run, the headless loop driver.
type Run struct {
	// Agent: claude or codex.
	Agent string `koanf:"agent"`
	// Session: fresh (a new agent session per cycle) or resume (continue
	// the last Codex session).
	Session string `koanf:"session"`
	// ClaudeBin and CodexBin are the agent binaries.
	ClaudeBin string `koanf:"claude_bin"`
	CodexBin  string `koanf:"codex_bin"`
	// Dir holds each cycle's event log, relative to the state dir.
	Dir string `koanf:"dir"`
}

type StopHook struct {
	Enabled         bool     `koanf:"enabled"`
	CheckReadyTasks bool     `koanf:"check_ready_tasks"`
	CheckInProgress bool     `koanf:"check_in_progress"`
	MaxCycles       int      `koanf:"max_cycles"`
	AllowExitOn     []string `koanf:"allow_exit_on"`
	// CompletionPromises as written in project.yaml: a string is a Promise
	// with its Text only, an object {text, condition} sets both.
	// Promises() gives them resolved.
	CompletionPromises []Promise `koanf:"completion_promises"`
	// OnBeadsError: allow (default) or block.
	OnBeadsError string `koanf:"on_beads_error"`
	// SubagentStop: allow (default) or drive (apply the same rules).
	SubagentStop string `koanf:"subagent_stop"`
	// CheckpointRequiresClean: the checkpoint promise needs a clean git tree.
	CheckpointRequiresClean bool `koanf:"checkpoint_requires_clean"`
	// NextIDs: how many next ready ids the state line names.
	NextIDs int `koanf:"next_ids"`
}

type DoneToken struct {
	Required bool   `koanf:"required"`
	Prefix   string `koanf:"prefix"`
	// Max caps blocks under the contract (0 = unlimited).
	Max int `koanf:"max"`
}

type Beads struct {
	Bin     string        `koanf:"bin"`
	Dir     string        `koanf:"dir"`
	Timeout time.Duration `koanf:"timeout"`
	// MaxProcesses bounds the bd processes of every runtasks of the user on
	// this machine at once; QueueTimeout bounds a call's wait for one.
	MaxProcesses int           `koanf:"max_processes"`
	QueueTimeout time.Duration `koanf:"queue_timeout"`
}

type StateDir struct {
	Dir string `koanf:"dir"`
}

type Log struct {
	File  string `koanf:"file"`
	Level string `koanf:"level"`
}

type Prompts struct {
	// RunTasks overrides the embedded orchestration prompt (a file path,
	// relative to the project root).
	RunTasks string `koanf:"run_tasks"`
}

// Promise is a completion promise with the condition that makes it true
// ("" until resolved: see Config.Promises).
type Promise struct {
	Text      string `json:"text"`
	Condition string `json:"condition"`
}

// PromptPath is the orchestration prompt override, resolved against the
// project root; "" means the embedded prompt.
func (c *Config) PromptPath() string {
	p := c.Prompts.RunTasks
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Root, p)
}
