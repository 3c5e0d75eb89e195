// Package orchestrator is runtasks' decision engine: from a hook input, a
// beads snapshot, the session's state, the configuration and the clock it
// decides whether an agent may stop. It runs no processes; beads and git are
// reached through the small interfaces below.
package orchestrator

import (
	"context"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
)

// Input is one stop (or the end of one headless agent run), normalised
// across agents by the hook adapters.
type Input struct {
	Agent string // claude, codex, gemini, cursor
	// Epic is the epic this stop is judged against, resolved by Stop
	// (--epic > the session's binding > RUNTASKS_EPIC > workflow.epic);
	// "" under the done-token contract alone.
	Epic           string
	Event          string // Stop, SubagentStop, AfterAgent, stop, run
	SessionID      string
	TurnID         string
	TranscriptPath string
	CWD            string
	StopHookActive bool
	// FinalMessage is the agent's last assistant text: last_assistant_message
	// when the agent sent it, else read from the end of the transcript.
	FinalMessage string
	// ToolErrors is true when the latest tool results in the transcript are
	// errors (used by the done-token contract's preamble).
	ToolErrors bool
	// Subagent is true for a subagent's stop (SubagentStop, agent_id set).
	Subagent bool
	// BackgroundTasks counts background tasks still running; the session is
	// woken when they end, so the stop is allowed.
	BackgroundTasks int
	// LoopCount is the agent's own count of follow-ups (Cursor).
	LoopCount int
	// Claims are the tasks this session claimed (runtasks claim, the prompt
	// hook), with their run folders; filled from the session's binding.
	Claims []ClaimedRun
	// Usage is what the turns since the previous stop used: runtasks run's
	// from the run's result event; a hook's is read by Stop through
	// Ports.Usage. Zero when unknown.
	Usage Usage
	// OthersSpent is what the other sessions' loops spent, by state epic
	// key; filled only when an epic budget is set (workflow.budget).
	OthersSpent map[string]Spent
}

// ClaimedRun is a task a session claimed, with its run folder.
type ClaimedRun struct {
	Task      string    `json:"task"`
	RunDir    string    `json:"run_dir"`
	ClaimedAt time.Time `json:"claimed_at"`
	// ResultsSHA256 is the digest of RESULTS.md as created from its
	// template: while the file still has it, the results are unwritten.
	ResultsSHA256 string `json:"results_sha256,omitempty"`
}

// Tracker is what the engine asks of beads; *beads.Client implements it.
type Tracker interface {
	// Ready lists the epic's ready descendants (bd ready --parent).
	Ready(ctx context.Context, epic string) ([]beads.Issue, error)
	// Subtree lists every unclosed descendant of the epic with its status.
	Subtree(ctx context.Context, epic string) ([]beads.Issue, error)
	// Show reads one issue; an unknown id is an error.
	Show(ctx context.Context, id string) (beads.Issue, error)
}

// Workspace answers questions about the project's git work tree.
type Workspace interface {
	// Uncommitted lists changed paths (git status --porcelain); empty when clean.
	Uncommitted(ctx context.Context) ([]string, error)
}

// Outcome names what a decision did, for logs, status and exit codes.
type Outcome string

const (
	OutcomeNotDriven   Outcome = "not_driven"    // no epic, no contract: never touched
	OutcomeDisabled    Outcome = "disabled"      // stop_hook.enabled is false
	OutcomeSubagent    Outcome = "subagent"      // a subagent stopped
	OutcomeBackground  Outcome = "background"    // background tasks still run
	OutcomeContinue    Outcome = "continue"      // work remains: blocked
	OutcomeRejected    Outcome = "rejected"      // a promise was rejected: blocked
	OutcomeComplete    Outcome = "complete"      // nothing remains
	OutcomeEscalated   Outcome = "escalated"     // only blocked/deferred work remains
	OutcomeCheckpoint  Outcome = "checkpoint"    // context checkpoint accepted
	OutcomeAccepted    Outcome = "accepted"      // a promise with condition always
	OutcomeCapReached  Outcome = "cap_reached"   // max_cycles or max_duration reached
	OutcomeNoProgress  Outcome = "no_progress"   // beads unchanged too long
	OutcomeBeadsError  Outcome = "beads_error"   // bd failed
	OutcomeTokenDone   Outcome = "token_done"    // done token printed (and beads agrees)
	OutcomeTokenMissed Outcome = "token_missing" // done token required, absent: blocked
	OutcomeIncomplete  Outcome = "incomplete"    // a configured check is incomplete: blocked
	OutcomeCheckError  Outcome = "check_error"   // a configured check could not run: allowed
	// OutcomeResultsMissing: a claimed task's RESULTS.md is still its
	// template while the work is otherwise done: blocked.
	OutcomeResultsMissing Outcome = "results_missing"
	// OutcomeEnded: the session's loop ended for good earlier (cap, accepted
	// promise, checkpoint, completion); it is not driven until armed again.
	OutcomeEnded Outcome = "ended"
	// OutcomeConfigError: the configuration could not be read; runtasks is
	// off for the project until it is fixed.
	OutcomeConfigError Outcome = "config_error"
	// OutcomeError: runtasks itself failed (state, prompt template, a
	// panic); the stop is allowed and the person told.
	OutcomeError Outcome = "error"
	// OutcomeBudget: workflow.budget is spent; the stop is allowed (checks
	// skipped) and a person decides whether the loop goes on.
	OutcomeBudget Outcome = "budget"
)

// Class is what an outcome means to the person and to an exit status.
type Class int

const (
	ClassIgnored     Class = iota // the stop was not runtasks' to judge
	ClassWorkLeft                 // work remains (a block, or a limit with work left)
	ClassDone                     // the work is done (beads, and every check, agree)
	ClassNeedsPerson              // only a person can move it on
	ClassPaused                   // the agent may stop; the loop goes on later (checkpoint)
	ClassError                    // something failed; the stop is allowed
)

// outcomeInfo declares, in one place, what each outcome does.
type outcomeInfo struct {
	class Class
	// ends: the loop's counters are cleared.
	ends bool
	// final: the loop is over for good: the session's binding is released
	// and its next stop is not driven until someone arms it again.
	final bool
}

var outcomes = map[Outcome]outcomeInfo{
	OutcomeNotDriven:      {class: ClassIgnored},
	OutcomeDisabled:       {class: ClassIgnored},
	OutcomeSubagent:       {class: ClassIgnored},
	OutcomeBackground:     {class: ClassIgnored},
	OutcomeEnded:          {class: ClassIgnored},
	OutcomeContinue:       {class: ClassWorkLeft},
	OutcomeRejected:       {class: ClassWorkLeft},
	OutcomeTokenMissed:    {class: ClassWorkLeft},
	OutcomeIncomplete:     {class: ClassWorkLeft},
	OutcomeResultsMissing: {class: ClassWorkLeft},
	OutcomeCapReached:     {class: ClassWorkLeft, ends: true, final: true},
	OutcomeComplete:       {class: ClassDone, ends: true, final: true},
	OutcomeTokenDone:      {class: ClassDone, ends: true, final: true},
	OutcomeAccepted:       {class: ClassDone, ends: true, final: true},
	OutcomeCheckpoint:     {class: ClassPaused, final: true},
	OutcomeEscalated:      {class: ClassNeedsPerson, ends: true},
	OutcomeNoProgress:     {class: ClassNeedsPerson, ends: true},
	// A spent budget ends the loop for good: only a person can grant more
	// (arming the session again starts its count afresh).
	OutcomeBudget:      {class: ClassNeedsPerson, ends: true, final: true},
	OutcomeBeadsError:  {class: ClassError},
	OutcomeCheckError:  {class: ClassError},
	OutcomeConfigError: {class: ClassError},
	OutcomeError:       {class: ClassError},
}

// Class says what the outcome means (ClassError for an unknown one).
func (o Outcome) Class() Class {
	if i, ok := outcomes[o]; ok {
		return i.class
	}
	return ClassError
}

// Done reports whether the outcome says the work is done.
func (o Outcome) Done() bool { return o.Class() == ClassDone }

// Ends reports whether the outcome clears the loop's counters.
func (o Outcome) Ends() bool { return outcomes[o].ends }

// Final reports whether the outcome ends the loop for good: the session's
// binding is released and it is not driven again until armed.
func (o Outcome) Final() bool { return outcomes[o].final }

// Decision is the engine's answer to one stop.
type Decision struct {
	Block bool
	// Reason goes to the agent when blocking.
	Reason string
	// SystemMessage goes to the person watching (not to the model).
	SystemMessage string
	Outcome       Outcome
	// Why is a one-line explanation for the log and runtasks status.
	Why    string
	Counts Counts
	// Actions lists changes made to beads (stuck tasks moved and so on).
	Actions []string
	// Stuck lists the stuck tasks found at this stop and the action to
	// apply to each (Stop applies them through Ports.Updater).
	Stuck []StuckTask
	// Epic is the epic the stop was judged against ("" for none).
	Epic string
	// Cycle is the session's block count after this decision.
	Cycle int
	// Verdicts are the completion checks' verdicts (workflow.checks, or the
	// built-in beads check when runtasks check asks for them).
	Verdicts []Verdict
	// Released is true when this decision ended the loop for good and the
	// session's binding to the epic was released.
	Released bool
	// Usage is what this stop counted and its cost (nil: none known).
	Usage *Spent
}

// Counts summarises an epic's unclosed descendants at one moment. Fields
// other than Ready are -1 when the rest of the subtree was not read.
type Counts struct {
	Ready      int `json:"ready"`
	InProgress int `json:"in_progress"`
	Blocked    int `json:"blocked"` // stored status blocked, or blocked by a dependency
	Deferred   int `json:"deferred"`
	Open       int `json:"open"` // open, not ready, not blocked (other reasons)
	Remaining  int `json:"remaining"`
}

// NoEpic keys the state of a session judged without an epic (the
// done-token contract alone, or claims without an epic).
const NoEpic = "-"

// State is what runtasks remembers for one (session, epic) pair. Its JSON
// codec is generated (types_easyjson.go): the stop hook reads and writes
// it at every stop.
//
//easyjson:json
type State struct {
	Session string `json:"session"`
	Epic    string `json:"epic"`
	// Cycles counts blocks since the loop (re)started.
	Cycles       int       `json:"cycles"`
	FirstBlockAt time.Time `json:"first_block_at,omitzero"`
	// Fingerprint of the epic's whole unclosed subtree the last time it was
	// read, and how many blocks in a row saw beads unchanged.
	Fingerprint string `json:"fingerprint,omitempty"`
	Unchanged   int    `json:"unchanged,omitempty"`
	// NoProgressWarned is set after the one no-progress warning block.
	NoProgressWarned bool `json:"no_progress_warned,omitempty"`
	// Worktrees lists the in-progress tasks whose worktree existed at the
	// last stop that looked: if one disappears, the task is stuck.
	Worktrees []string `json:"worktrees,omitempty"`
	// ReadyFingerprint is the fingerprint of the ready list at the last
	// block (it stands in for the subtree on the one-query path).
	ReadyFingerprint string `json:"ready_fingerprint,omitempty"`
	// ResultsBlocks counts stops blocked for an untouched RESULTS.md; it is
	// capped by max_cycles like the cycle counter.
	ResultsBlocks int `json:"results_blocks,omitempty"`
	// Ended is the outcome that ended the loop for good, and when; a
	// session with an ended loop is not driven until armed again.
	Ended     Outcome   `json:"ended,omitempty"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Last      *Record   `json:"last,omitempty"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Spent is what the session's loop used since it was armed (kept
	// when a loop ends; cleared when the session is armed again).
	Spent Spent `json:"spent,omitzero"`
	// LastReason is the full reason last fed back to the agent.
	LastReason string `json:"last_reason,omitempty"`
	// UsageCursor is the client's id of the last response whose usage
	// was counted (Usage.Since).
	UsageCursor string `json:"usage_cursor,omitempty"`
	// UsageMark is where the last read of the session's transcript ended:
	// the next stop reads only what was written after it.
	UsageMark *UsageMark `json:"usage_mark,omitempty"`
}

// Record is one decision as written to the append-only decision log (its
// codec is generated, as State's is).
//
//easyjson:json
type Record struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Epic    string    `json:"epic"`
	Agent   string    `json:"agent,omitempty"`
	Event   string    `json:"event,omitempty"`
	Outcome Outcome   `json:"outcome"`
	Block   bool      `json:"block"`
	Cycle   int       `json:"cycle"`
	Max     int       `json:"max"`
	Why     string    `json:"why"`
	Counts  *Counts   `json:"counts,omitempty"`
	Actions []string  `json:"actions,omitempty"`
	// Usage is what the turns since the previous stop used and cost.
	Usage *Spent `json:"usage,omitempty"`
	// Task is the task the session claimed last, which the usage is
	// counted against.
	Task string `json:"task,omitempty"`
}
