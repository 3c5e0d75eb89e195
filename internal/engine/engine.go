// Package engine is runtasks' decision engine: from a hook input, a
// beads snapshot, the session's state, the configuration and the clock it
// decides whether an agent may stop. It runs no processes; beads and git are
// reached through the small interfaces below.
package engine

import (
	"context"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// Input is one stop (or the end of one headless agent run), normalised
// across agents by the hook adapters.
type Input struct {
	Agent string // claude, codex, gemini, cursor
	// Epic is the epic this stop is judged against, resolved by Stop
	// (--epic > the session's binding > RUNTASKS_EPIC > workflow.epic);
	// "" under the done-token contract alone. An id that is not an epic
	// is a task, driven until it is closed itself (decider.readRest).
	Epic           string
	Event          string // Stop, SubagentStop, AfterAgent, stop, run
	SessionID      string
	TranscriptPath string
	CWD            string
	// FinalMessage is the agent's last assistant text (last_assistant_message,
	// else read from the end of the transcript).
	FinalMessage string
	// ToolErrors: the latest tool results in the transcript are errors (the
	// done-token contract's preamble says so).
	ToolErrors bool
	Subagent   bool // SubagentStop, or agent_id set
	// BackgroundTasks counts background tasks still running; the session is
	// woken when they end, so the stop is allowed.
	BackgroundTasks int
	// Claims are the tasks this session claimed, from its binding.
	Claims []state.ClaimedRun
	// Usage is what the turns since the previous stop used: from runtasks
	// run's result event, or read by Stop through Ports.Usage.
	Usage usage.Usage
	// OthersSpent is what the other sessions' loops spent, by state epic
	// key; filled only when an epic budget is set (workflow.budget).
	OthersSpent map[string]usage.Spent
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

// Decision is the engine's answer to one stop.
type Decision struct {
	Block         bool
	Reason        string // to the agent, when blocking
	SystemMessage string // to the person watching, not to the model
	Outcome       state.Outcome
	Why           string // one line, for the log and runtasks status
	Counts        state.Counts
	Actions       []string // changes made to beads (stuck tasks moved…)
	// Stuck lists the stuck tasks found at this stop and the action to
	// apply to each (Stop applies them through Ports.Updater).
	Stuck []StuckTask
	Epic  string // the epic the stop was judged against ("" for none)
	// Cycle is the loop's count after this decision (its blocks; an
	// ending decision keeps the count the loop ended at) and Max its cap
	// (0: none): the one count status, watch, report and run show.
	Cycle, Max int
	// Deadline is when workflow.max_duration ends the loop (zero: never);
	// a driver may stop an agent run there, then ask again.
	Deadline time.Time
	// Fresh: the next cycle starts in a fresh context (runtasks run after
	// a context checkpoint).
	Fresh bool
	// Verdicts are the completion checks' verdicts (workflow.checks, or the
	// built-in beads check when runtasks check asks for them).
	Verdicts []Verdict
	Usage    *usage.Spent // what this stop counted and its cost (nil: none known)
}
