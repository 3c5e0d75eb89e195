// Package notify runs workflow.notify: the commands a person configured to
// be told when a loop needs them or ends. A stop hands the event to a
// detached runtasks process (Dispatch) and returns at once; that process
// (Run) runs each command in its own process group within its timeout,
// with the event as JSON on stdin and as RUNTASKS_* variables, and logs
// what failed. Nothing here can delay or change a stop.
package notify

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// Events a notify command can ask for.
const (
	Complete    = "complete"
	NeedsPerson = "needs_person"
	CapReached  = "cap_reached"
	NoProgress  = "no_progress"
	BeadsError  = "beads_error"
	Budget      = "budget"
)

// EventFor is the notify event of a decision, "" for none. Only stops that
// are allowed notify (a loop that goes on needs nobody), except a beads
// error, which needs a person even when on_beads_error blocks.
func EventFor(d engine.Decision) string {
	o := d.Outcome
	switch {
	case o == state.OutcomeBeadsError:
		return BeadsError
	case d.Block:
		return ""
	case o == state.OutcomeBudget:
		return Budget
	case o == state.OutcomeCapReached:
		return CapReached
	case o == state.OutcomeNoProgress:
		return NoProgress
	case o.Done():
		return Complete
	case o == state.OutcomeEscalated || o.Class() == state.ClassError:
		return NeedsPerson
	}
	return ""
}

// Event is what a notify command gets, as JSON on stdin.
type Event struct {
	Event   string        `json:"event"`
	Outcome string        `json:"outcome"`
	Session string        `json:"session,omitempty"`
	Epic    string        `json:"epic,omitempty"`
	Agent   string        `json:"agent,omitempty"`
	Cycle   int           `json:"cycle"`
	Why     string        `json:"why"`
	Message string        `json:"message,omitempty"`
	Counts  *state.Counts `json:"counts,omitempty"`
	Usage   *usage.Spent  `json:"usage,omitempty"`
	// Spent is the session's loop since it was armed, when known.
	Spent   *usage.Spent `json:"spent,omitempty"`
	Project string       `json:"project"`
	Time    time.Time    `json:"time"`
}

// NewEvent describes one decision's event.
func NewEvent(event string, in engine.Input, d engine.Decision, project string, now time.Time) Event {
	e := Event{Event: event, Outcome: string(d.Outcome), Session: in.SessionID, Epic: d.Epic, Agent: in.Agent,
		Cycle: d.Cycle, Why: d.Why, Message: d.SystemMessage, Usage: d.Usage, Project: project, Time: now.UTC()}
	if d.Counts != (state.Counts{}) {
		c := d.Counts
		e.Counts = &c
	}
	return e
}

// Summary is one line for a person: what happened, where, and why.
func (e Event) Summary() string {
	what := map[string]string{Complete: "complete", NeedsPerson: "needs a person", CapReached: "reached its cap",
		NoProgress: "made no progress", BeadsError: "could not read beads", Budget: "spent its budget"}[e.Event]
	subject := "runtasks"
	if e.Epic != "" {
		subject += " " + e.Epic
	}
	s := subject + " " + what
	if r := []rune(e.Session); len(r) > 12 {
		s += " (session " + string(r[:12]) + "…)"
	} else if e.Session != "" {
		s += " (session " + e.Session + ")"
	}
	return s + ": " + e.Why
}

// Env is the event as RUNTASKS_* variables. None of them is a
// configuration key, except RUNTASKS_EPIC, which names the same epic, so
// a notify command may run runtasks itself.
func (e Event) Env() []string {
	env := []string{
		"RUNTASKS_EVENT=" + e.Event,
		"RUNTASKS_OUTCOME=" + e.Outcome,
		"RUNTASKS_SESSION=" + e.Session,
		"RUNTASKS_EPIC=" + e.Epic,
		"RUNTASKS_AGENT=" + e.Agent,
		"RUNTASKS_CYCLE=" + strconv.Itoa(e.Cycle),
		"RUNTASKS_WHY=" + e.Why,
		"RUNTASKS_MESSAGE=" + e.Message,
		"RUNTASKS_SUMMARY=" + e.Summary(),
		"RUNTASKS_PROJECT=" + e.Project,
	}
	if e.Usage != nil {
		env = append(env, "RUNTASKS_TOKENS="+strconv.FormatInt(e.Usage.Total(), 10),
			"RUNTASKS_COST="+strconv.FormatFloat(e.Usage.Cost, 'f', 6, 64))
	}
	return env
}

// Commands are the configured commands that ask for event.
func Commands(cfg *config.Config, event string) []config.Notify {
	var out []config.Notify
	for _, n := range cfg.Workflow.Notify {
		if slices.Contains(n.Events, event) {
			out = append(out, n)
		}
	}
	return out
}

// Gate decides whether workflow.notify may run commands: a hook runs them
// with the person's rights, so they must come from a source the person
// trusts.
type Gate func(cfg *config.Config, src *config.Sources) bool

// FromTrustedSource is the Gate: workflow.notify set in the environment or
// by a flag is the person's own; set in a file, it runs only when that
// file was named on the command line (--config: the hook's command line
// is the person's) or trusted(file) says so. trusted is the seam for
// `runtasks trust`; nil trusts no file.
func FromTrustedSource(explicitFile string, trusted func(file string) bool) Gate {
	return func(cfg *config.Config, src *config.Sources) bool {
		if src == nil {
			return false
		}
		from := (*src)["workflow.notify"]
		switch {
		case from == "" || from == config.SourceDefault:
			return false // nothing configured
		case strings.HasPrefix(from, "env ") || strings.HasPrefix(from, "flag "):
			return true
		case explicitFile != "" && from == cfg.File:
			return true
		}
		return trusted != nil && trusted(from)
	}
}

// Job is what the detached process runs: the event, the commands, where.
type Job struct {
	Event    Event           `json:"event"`
	Commands []config.Notify `json:"commands"`
	// Dir is the project root: the commands run there.
	Dir string `json:"dir"`
	// Log is the file failures are appended to.
	Log string `json:"log"`
}

// MaxJob bounds a job's JSON (it is read from a pipe).
const MaxJob = 1 << 20
