// Package engine is runtasks' decision engine: from a hook input, a
// beads snapshot, the session's state, the configuration and the clock it
// decides whether an agent may stop. It runs no processes; beads and git are
// reached through the small interfaces below.
package engine

import (
	"context"

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
	Claims []state.ClaimedRun
	// Usage is what the turns since the previous stop used: runtasks run's
	// from the run's result event; a hook's is read by Stop through
	// Ports.Usage. Zero when unknown.
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
	Block bool
	// Reason goes to the agent when blocking.
	Reason string
	// SystemMessage goes to the person watching (not to the model).
	SystemMessage string
	Outcome       state.Outcome
	// Why is a one-line explanation for the log and runtasks status.
	Why    string
	Counts state.Counts
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
	Usage *usage.Spent
}
