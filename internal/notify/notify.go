// Package notify runs workflow.notify, the commands that tell a person a
// loop needs them or ended. A stop hands the event to a detached runtasks
// process (Send) and returns at once: nothing here can delay a stop.
package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/shell"
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
	SelfDisarm  = "self_disarm" // a session's own agent ran runtasks disarm (refused)
	Reopened    = "reopened"    // the stop audit reopened a task closed without passing its checks
)

// EventFor is the notify event of a decision, "" for none. Only stops that
// are allowed notify (a loop that goes on needs nobody), except a beads
// error, which needs a person even when on_beads_error blocks.
func EventFor(d engine.Decision) string {
	o := d.Outcome
	switch {
	case o == state.OutcomeBeadsError || o == state.OutcomeReopened:
		return string(o) // these events are named as their outcomes
	case d.Block:
		return ""
	case slices.Contains([]state.Outcome{state.OutcomeBudget, state.OutcomeSelfDisarm, state.OutcomeCapReached, state.OutcomeNoProgress}, o):
		return string(o)
	case o.Done():
		return Complete
	case o == state.OutcomeEscalated || o.Class() == state.ClassError:
		return NeedsPerson
	}
	return ""
}

// Event is what a notify command gets, as JSON on stdin.
type Event struct {
	Event   string       `json:"event"`
	Outcome string       `json:"outcome"`
	Session string       `json:"session,omitempty"`
	Epic    string       `json:"epic,omitempty"`
	Agent   string       `json:"agent,omitempty"`
	Cycle   int          `json:"cycle"`
	Why     string       `json:"why"`
	Message string       `json:"message,omitempty"`
	Counts  state.Counts `json:"counts,omitzero"`
	Usage   *usage.Spent `json:"usage,omitempty"`
	Project string       `json:"project"`
	Time    time.Time    `json:"time"`
}

func NewEvent(event string, in engine.Input, d engine.Decision, project string, now time.Time) Event {
	return Event{Event: event, Outcome: string(d.Outcome), Session: in.SessionID, Epic: d.Epic, Agent: in.Agent,
		Cycle: d.Cycle, Why: d.Why, Message: d.SystemMessage, Counts: d.Counts, Usage: d.Usage, Project: project, Time: now.UTC()}
}

// Summary is one line for a person: what happened, where, and why.
func (e Event) Summary() string {
	what := map[string]string{Complete: "complete", NeedsPerson: "needs a person", CapReached: "reached its cap",
		NoProgress: "made no progress", BeadsError: "could not read beads", Budget: "spent its budget",
		SelfDisarm: "refused a disarm by its own agent", Reopened: "reopened a task closed without passing its checks"}[e.Event]
	s := "runtasks"
	if e.Epic != "" {
		s += " " + e.Epic
	}
	s += " " + what
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

// FromTrustedSource decides whether workflow.notify may run commands: a
// hook runs them with the person's rights, so they must come from a source
// the person trusts. Env and flags are the person's own; a file counts
// when named by --config or trusted(file) says so.
func FromTrustedSource(explicitFile string, trusted func(file string) bool) func(*config.Config, *config.Sources) bool {
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
	Dir      string          `json:"dir"` // the project root: the commands run there
	Log      string          `json:"log"` // the file outcomes are appended to
}

// MaxJob bounds a job's JSON (it is read from a pipe).
const MaxJob = 1 << 20

// ReadJob reads a job from r (bounded).
func ReadJob(r io.Reader) (Job, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxJob+1))
	if err != nil {
		return Job{}, err
	}
	if len(data) > MaxJob {
		return Job{}, fmt.Errorf("notify job larger than %d bytes", MaxJob)
	}
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return Job{}, fmt.Errorf("notify job: %w", err)
	}
	return j, nil
}

// Outcome is how one command ended.
type Outcome struct {
	Run     string
	OK      bool
	Detail  string // the exit status, the timeout, or what could not start
	Elapsed time.Duration
}

// Run runs the job's commands side by side, each within its timeout in its
// own process group, with the event as JSON on stdin and as RUNTASKS_*
// variables, and returns how each ended.
func Run(ctx context.Context, job Job, environ []string) []Outcome {
	event, _ := json.Marshal(job.Event)
	event = append(event, '\n')
	env := append(append([]string(nil), environ...), job.Event.Env()...)
	out := make([]Outcome, len(job.Commands))
	var wg sync.WaitGroup
	for i, n := range job.Commands {
		wg.Go(func() {
			timeout := cmp.Or(n.Timeout, config.NotifyTimeout)
			res, err := shell.Runner{Env: env, Stdin: event}.Run(ctx, job.Dir, n.Run, timeout)
			o := Outcome{Run: n.Run, Elapsed: res.Elapsed}
			switch {
			case err != nil:
				o.Detail = err.Error()
			case res.TimedOut:
				o.Detail = fmt.Sprintf("timed out after %s; its process group was stopped", timeout)
			case res.ExitCode != 0:
				o.Detail = fmt.Sprintf("exit status %d", res.ExitCode)
			default:
				o.OK = true
			}
			if !o.OK {
				if t := lastLine(res.Output); t != "" {
					o.Detail += ": " + t
				}
			}
			out[i] = o
		})
	}
	wg.Wait()
	return out
}

// Log appends a line per command to the job's log, failed or not (a person
// checking a recipe wants to see it ran).
func Log(job Job, outcomes []Outcome) error {
	if job.Log == "" {
		return errors.New("no notify log")
	}
	f, err := os.OpenFile(job.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var b strings.Builder
	for _, o := range outcomes {
		status := "ok"
		if !o.OK {
			status = "FAILED: " + o.Detail
		}
		fmt.Fprintf(&b, "%s %s session=%s epic=%s %q %s (%s)\n", time.Now().UTC().Format(time.RFC3339), job.Event.Event,
			job.Event.Session, job.Event.Epic, o.Run, status, o.Elapsed.Round(time.Millisecond))
	}
	_, err = f.WriteString(b.String())
	return err
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if r := []rune(l); len(r) > 200 {
		l = string(r[:200]) + "…"
	}
	return l
}
