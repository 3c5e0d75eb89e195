// Package engine decides whether an agent may stop, from a hook input, a
// beads snapshot, the session's state, the configuration and the clock. It
// runs no processes: beads and git are reached through the interfaces below.
package engine

import (
	"context"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// Input is one stop (or the end of a headless agent run), normalised across agents.
type Input struct {
	Agent string // claude, codex, gemini, cursor
	// Epic is the epic (or task) this stop is judged against, resolved by
	// Stop; "" under the done-token contract alone.
	Epic            string
	Event           string // Stop, SubagentStop, AfterAgent, stop, run
	SessionID       string
	TranscriptPath  string
	FinalMessage    string             // the agent's last assistant text
	ToolErrors      bool               // the latest tool results in the transcript are errors
	Subagent        bool               // SubagentStop, or agent_id set
	BackgroundTasks int                // still running: the session is woken when they end, so the stop is allowed
	Claims          []state.ClaimedRun // the tasks the session claimed (its binding)
	// Usage is what the turns since the previous stop used (from run's
	// result event, or read by Stop through Ports.Usage).
	Usage usage.Usage
	// OthersSpent is what the other sessions' loops spent, by state epic
	// key; filled only when an epic budget is set.
	OthersSpent map[string]usage.Spent
}

// Tracker is what the engine asks of beads; *beads.Client implements it.
type Tracker interface {
	Ready(ctx context.Context, epic string) ([]beads.Issue, error)   // bd ready --parent
	Subtree(ctx context.Context, epic string) ([]beads.Issue, error) // every unclosed descendant
	Show(ctx context.Context, id string) (beads.Issue, error)        // an unknown id is an error
	// Descendants reads the epic and every descendant, closed ones too.
	Descendants(ctx context.Context, epic string) (beads.Issue, []beads.Issue, error)
}

// Decision is the engine's answer to one stop.
type Decision struct {
	Block         bool
	Reason        string // to the agent, when blocking
	SystemMessage string // to the person watching, not to the model
	Outcome       state.Outcome
	Why           string // one line, for the log and runtasks status
	Counts        state.Counts
	Actions       []string    // changes made to beads (stuck tasks moved…)
	Stuck         []StuckTask // the stuck tasks found, for Stop to apply
	Epic          string      // the epic the stop was judged against ("" for none)
	// Cycle is the loop's count after this decision (an ending decision
	// keeps the count the loop ended at) and Max its cap (0: none).
	Cycle, Max int
	Deadline   time.Time    // when workflow.max_duration ends the loop (zero: never)
	Fresh      bool         // the next cycle starts in a fresh context (run after a checkpoint)
	Verdicts   []Verdict    // the completion checks' verdicts
	Usage      *usage.Spent // what this stop counted and its cost (nil: none known)
}

// Exit statuses: one vocabulary for every runtasks command (each command's
// --help lists the ones it uses; docs/exit-status.md lists them all). The
// hook commands always exit 0: their answer is on stdout.
const (
	ExitOK          = 0   // done: the work is complete, or the command succeeded
	ExitFailed      = 1   // failed: runtasks or the agent failed while running
	ExitWorkLeft    = 2   // work left: a block, an incomplete check, a limit reached with work left
	ExitNeedsPerson = 3   // needs a person: only blocked work, no progress, or nothing to judge
	ExitUsage       = 4   // usage or setup error: flags, configuration, bd or a check that cannot run
	ExitInterrupted = 130 // interrupted (Ctrl-C, SIGTERM, SIGHUP): what was started was stopped
)

// ExitStatus is the exit status of a command ending on a decision of class c.
func ExitStatus(c state.Class) int {
	switch c {
	case state.ClassDone, state.ClassPaused:
		return ExitOK
	case state.ClassWorkLeft:
		return ExitWorkLeft
	case state.ClassNeedsPerson, state.ClassIgnored:
		return ExitNeedsPerson
	}
	return ExitUsage
}
