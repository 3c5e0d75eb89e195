// Package state is what runtasks remembers, in the state directory: each
// session's loop (State), its binding to an epic and claimed tasks
// (Binding), and the append-only decision log (Record) with its outcomes.
package state

import (
	"time"

	"github.com/runtasks/runtasks/internal/usage"
)

// ClaimedRun is a task a session claimed, with its run folder.
type ClaimedRun struct {
	Task      string    `json:"task"`
	RunDir    string    `json:"run_dir"`
	ClaimedAt time.Time `json:"claimed_at"`
	// ResultsSHA256 is RESULTS.md's digest as created from its template:
	// while the file still has it, the results are unwritten.
	ResultsSHA256 string `json:"results_sha256,omitempty"`
}

// LatestClaim is the task claimed last ("" without claims).
func LatestClaim(claims []ClaimedRun) string {
	var last ClaimedRun
	for _, c := range claims {
		if last.Task == "" || !c.ClaimedAt.Before(last.ClaimedAt) {
			last = c
		}
	}
	return last.Task
}

// Outcome names what a decision did, for logs, status and exit codes.
type Outcome string

const (
	OutcomeNotDriven      Outcome = "not_driven"      // no epic, no contract: never touched
	OutcomeDisabled       Outcome = "disabled"        // stop_hook.enabled is false
	OutcomeSubagent       Outcome = "subagent"        // a subagent stopped
	OutcomeBackground     Outcome = "background"      // background tasks still run
	OutcomeContinue       Outcome = "continue"        // work remains: blocked
	OutcomeRejected       Outcome = "rejected"        // a promise was rejected: blocked
	OutcomeComplete       Outcome = "complete"        // nothing remains
	OutcomeEscalated      Outcome = "escalated"       // only blocked/deferred work remains
	OutcomeCheckpoint     Outcome = "checkpoint"      // context checkpoint accepted
	OutcomeAccepted       Outcome = "accepted"        // a promise with condition always
	OutcomeCapReached     Outcome = "cap_reached"     // max_cycles or max_duration reached
	OutcomeNoProgress     Outcome = "no_progress"     // beads unchanged too long
	OutcomeBeadsError     Outcome = "beads_error"     // bd failed
	OutcomeTokenDone      Outcome = "token_done"      // done token printed (and beads agrees)
	OutcomeTokenMissed    Outcome = "token_missing"   // done token required, absent: blocked
	OutcomeIncomplete     Outcome = "incomplete"      // a configured check is incomplete: blocked
	OutcomeCheckError     Outcome = "check_error"     // a configured check could not run: allowed
	OutcomeResultsMissing Outcome = "results_missing" // a claimed task's RESULTS.md is unwritten: blocked
	OutcomeEnded          Outcome = "ended"           // the loop ended for good earlier: not driven until armed
	OutcomeConfigError    Outcome = "config_error"    // the configuration could not be read: runtasks is off
	OutcomeError          Outcome = "error"           // runtasks itself failed: allowed, the person told
	OutcomeBudget         Outcome = "budget"          // workflow.budget is spent: allowed, checks skipped
	OutcomeSelfDisarm     Outcome = "self_disarm"     // the session's own agent ran runtasks disarm: refused, a person told
	OutcomeVerified       Outcome = "verified"        // a task's workflow.verify checks passed (Task, Commit, Checks)
	OutcomeCloseDenied    Outcome = "close_denied"    // the pre-tool gate denied a close: its checks failed
	OutcomeReopened       Outcome = "reopened"        // the stop audit reopened a task closed unverified: blocked
	OutcomeUnverified     Outcome = "unverified"      // a task closed unverified fails its checks (on_unverified: block): blocked
	// OutcomeDuplicate: a second runtasks stop hook of the same stop (two
	// installs that both fire); the first one's answer stands, not counted.
	OutcomeDuplicate Outcome = "duplicate"
	// OutcomeInterrupted: runtasks run was stopped by Ctrl-C, SIGTERM or
	// SIGHUP (never the engine's); a later run goes on.
	OutcomeInterrupted Outcome = "interrupted"
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
	ends  bool // the loop's counters are cleared
	final bool // the loop is over for good (Final)
}

var outcomes = map[Outcome]outcomeInfo{
	OutcomeNotDriven:      {class: ClassIgnored},
	OutcomeDisabled:       {class: ClassIgnored},
	OutcomeSubagent:       {class: ClassIgnored},
	OutcomeBackground:     {class: ClassIgnored},
	OutcomeEnded:          {class: ClassIgnored},
	OutcomeDuplicate:      {class: ClassIgnored},
	OutcomeVerified:       {class: ClassIgnored},
	OutcomeCloseDenied:    {class: ClassIgnored},
	OutcomeReopened:       {class: ClassWorkLeft},
	OutcomeUnverified:     {class: ClassWorkLeft},
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
	OutcomeInterrupted:    {class: ClassPaused},
	OutcomeEscalated:      {class: ClassNeedsPerson, ends: true},
	OutcomeNoProgress:     {class: ClassNeedsPerson, ends: true},
	// A spent budget ends the loop for good: only a person can grant more
	// (arming the session again starts its count afresh).
	OutcomeBudget: {class: ClassNeedsPerson, ends: true, final: true},
	// The loop is the person's: its own agent cannot switch it off. The
	// attempt changes nothing in the loop and is shown to the person.
	OutcomeSelfDisarm:  {class: ClassNeedsPerson},
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

// State is what runtasks remembers for one (session, epic) pair.
type State struct {
	Session string `json:"session"`
	Epic    string `json:"epic"`
	// Cycles counts blocks since the loop (re)started.
	Cycles       int       `json:"cycles"`
	FirstBlockAt time.Time `json:"first_block_at,omitzero"`
	// Fingerprint of the epic's whole unclosed subtree the last time it was
	// read, and how many blocks in a row saw beads unchanged.
	Fingerprint      string `json:"fingerprint,omitempty"`
	Unchanged        int    `json:"unchanged,omitempty"`
	NoProgressWarned bool   `json:"no_progress_warned,omitempty"` // after the one warning block
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
	Spent      usage.Spent `json:"spent,omitzero"`
	LastReason string      `json:"last_reason,omitempty"` // the full reason last fed back
	// UsageCursor is the client's id of the last response counted
	// (Usage.Since); UsageMark is where the last read of the transcript
	// ended: the next stop reads only what was written after it.
	UsageCursor string           `json:"usage_cursor,omitempty"`
	UsageMark   *usage.UsageMark `json:"usage_mark,omitempty"`
	// LastStop is the stop the last decision answered: two runtasks stop
	// hooks that both fire for one stop (a project and a user install)
	// decide it once, the second finding this mark (engine.Stop).
	LastStop *StopMark `json:"last_stop,omitempty"`
	// AuditFrom: the epic's tasks closed since then are audited at the next
	// stop (workflow.verify).
	AuditFrom time.Time `json:"audit_from,omitzero"`
}

// StopMark identifies a stop as the agent made it, for engine.Stop's
// duplicate rule: Key hashes its event, transcript and final message; Size
// is the transcript's size then (-1 without one); DecidedAt is when its
// decision was recorded.
type StopMark struct {
	Key       string    `json:"key"`
	Size      int64     `json:"size"`
	DecidedAt time.Time `json:"decided_at"`
}

// Count is the loop's cycle count and cap as its last decision gave them
// (an ended loop: the count it ended at); before any, the state's count
// and no known cap. status, watch and report show this count.
func (s State) Count() (n, max int) {
	if s.Last != nil {
		return s.Last.Cycle, s.Last.Max
	}
	return s.Cycles, 0
}

// Record is one decision as written to the append-only decision log.
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
	// Usage is what the turns since the previous stop used and cost,
	// counted against Task, the task the session claimed last.
	Usage *usage.Spent `json:"usage,omitempty"`
	Task  string       `json:"task,omitempty"`
	// Commit and Checks: the commit a verification (OutcomeVerified,
	// OutcomeCloseDenied) judged Task at, and the checks it ran.
	Commit string   `json:"commit,omitempty"`
	Checks []string `json:"checks,omitempty"`
}
