// Package headless drives an epic with a coding agent run non-interactively,
// one agent run per cycle (runtasks run). After each run it reads beads and
// decides with the stop hook's engine (engine.Decide): no rule is
// written twice.
package headless

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// Exit statuses of a run, in runtasks' one vocabulary (engine.Exit*).
const (
	ExitComplete    = engine.ExitOK          // the epic is complete
	ExitError       = engine.ExitFailed      // runtasks or the agent failed
	ExitLimit       = engine.ExitWorkLeft    // max cycles or max duration reached with work left
	ExitNeedsPerson = engine.ExitNeedsPerson // all remaining work is blocked, or no progress
	ExitSetup       = engine.ExitUsage       // bad configuration, bd or a check cannot run
	ExitInterrupted = engine.ExitInterrupted // interrupted (Ctrl-C); the agent was stopped
)

// OutcomeInterrupted is recorded in the decision log when a run is
// interrupted; the engine never returns it.
const OutcomeInterrupted state.Outcome = "interrupted"

// EventRun is the Input.Event of a decision made after an agent run.
const EventRun = "run"

// Beads is what a run asks of beads: the engine's queries and the epic's
// closed/total for the progress bar. *beads.Client implements it.
type Beads interface {
	engine.Tracker
	Tally(ctx context.Context, epic string) (beads.Tally, error)
}

// Options configure one run.
type Options struct {
	// Config is the loaded configuration; Workflow.Epic names the epic,
	// Workflow.StopHook.MaxCycles caps the agent runs, Run.* chooses the
	// agent, and StateDir()/Run.Dir hold the event logs.
	Config *config.Config
	// Args are the user's extra agent arguments.
	Args []string
	// MaxDuration bounds the whole run (0 = none).
	MaxDuration time.Duration
	Beads       Beads
	// Ports are the stop engine's ports (bd, git, the shell for command
	// checks): each cycle's end goes through engine.Stop, as a
	// stop hook does.
	Ports engine.Ports
	// Environ is the agent's environment.
	Environ []string
	// Out receives progress; TTY draws a live status line with a bar.
	Out io.Writer
	TTY bool
	Now func() time.Time
	Log *log.Logger
	// Width is the terminal's width now, for the live line (nil or 0:
	// DefaultWidth).
	Width func() int
	// Grace is how long the agent's process group has to exit after SIGINT
	// before it is killed (default 10 s).
	Grace time.Duration
	// Kill, when closed (a second Ctrl-C), kills the agent's process group
	// at once instead of waiting for the grace.
	Kill <-chan struct{}
	// RunID names the run (default: UTC time and a random suffix). An id
	// whose folder exists is refused: a run never overwrites another.
	RunID string
	// TallyEvery is the least time between two counts of the epic's closed
	// tasks while the agent works, for the live line (default 5 s).
	TallyEvery time.Duration
}

// Result is how a run ended.
type Result struct {
	Code    int
	RunID   string
	Dir     string // the run's folder (run.json, each cycle's event log)
	Cycles  int    // agent runs started
	Outcome state.Outcome
	Why     string
	Tally   beads.Tally
	// ClosedThisRun counts descendants closed since the run started.
	ClosedThisRun int
}

// CycleRecord is one agent run in run.json.
type CycleRecord struct {
	N         int           `json:"n"`
	SessionID string        `json:"session_id,omitempty"`
	Resumed   bool          `json:"resumed,omitempty"`
	StartedAt time.Time     `json:"started_at"`
	Duration  string        `json:"duration"`
	ExitCode  int           `json:"exit_code"`
	Events    int           `json:"events"`
	Log       string        `json:"log"`
	Error     string        `json:"error,omitempty"`
	Final     string        `json:"final_message,omitempty"`
	Outcome   state.Outcome `json:"outcome,omitempty"`
	Why       string        `json:"why,omitempty"`
	Closed    int           `json:"closed"`
	Total     int           `json:"total"`
}

// RunState is the run's record, rewritten after every cycle and at the end
// (run.json in the run's folder).
type RunState struct {
	RunID         string        `json:"run_id"`
	Epic          string        `json:"epic"`
	Agent         string        `json:"agent"`
	SessionMode   string        `json:"session_mode"`
	EngineSession string        `json:"engine_session"`
	Status        string        `json:"status"` // running, complete, limit, needs_person, error, interrupted
	PID           int           `json:"pid"`    // runtasks' process: a "running" record whose pid is gone was killed
	MaxCycles     int           `json:"max_cycles"`
	MaxDuration   string        `json:"max_duration,omitempty"`
	StartedAt     time.Time     `json:"started_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
	EndedAt       time.Time     `json:"ended_at,omitzero"`
	ExitCode      *int          `json:"exit_code,omitempty"`
	Outcome       state.Outcome `json:"outcome,omitempty"`
	Why           string        `json:"why,omitempty"`
	ClosedAtStart int           `json:"closed_at_start"`
	Closed        int           `json:"closed"`
	Total         int           `json:"total"`
	Cycles        []CycleRecord `json:"cycles"`
}

type runner struct {
	o      Options
	cfg    *config.Config
	epic   string
	agent  string
	bin    string
	max    int
	prompt string // the rendered orchestration prompt
	store  *state.Store
	state  RunState
	dir    string
	p      *progress
	log    *log.Logger
	// parent is Run's ctx (an interrupt); the agent's may end earlier
	// (--max-duration).
	parent       context.Context
	agentRunning atomic.Bool // the live line's tally is refreshed only then
	usage        usage.Usage // the last agent run's, for its decision
	workDir      string      // where the agent runs ("" = the project root)
	// stopWhy says why the agent's context ended when it is neither an
	// interrupt nor --max-duration (a worker's lease lost).
	stopWhy atomic.Value
}

// Run drives the epic until the engine ends the loop, the budget is spent,
// the agent fails or ctx is cancelled (Ctrl-C). Every end is recorded in
// run.json and the decision log.
func Run(ctx context.Context, o Options) (Result, error) {
	r, err := newRunner(o)
	if err != nil { // nothing ran
		return Result{Code: ExitSetup}, err
	}
	return r.run(ctx)
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = log.New(io.Discard)
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.TallyEvery <= 0 {
		o.TallyEvery = 5 * time.Second
	}
	return o
}

func newRunner(o Options) (*runner, error) {
	cfg := o.Config
	if cfg == nil {
		return nil, errors.New("no configuration")
	}
	o = o.withDefaults()
	r := &runner{o: o, cfg: cfg, epic: cfg.Workflow.Epic, agent: cfg.Run.Agent, log: o.Log}
	if r.epic == "" {
		return nil, errors.New("no epic: give --epic, RUNTASKS_EPIC or workflow.epic")
	}
	if !cfg.Workflow.StopHook.Enabled {
		return nil, errors.New("workflow.stop_hook.enabled is false: the engine would drive nothing")
	}
	switch r.agent {
	case AgentClaude:
		r.bin = cfg.Run.ClaudeBin
	case AgentCodex:
		r.bin = cfg.Run.CodexBin
	default:
		return nil, fmt.Errorf("unknown agent %q (want %s or %s)", r.agent, AgentClaude, AgentCodex)
	}
	if !filepath.IsAbs(r.bin) && strings.ContainsRune(r.bin, filepath.Separator) {
		r.bin = filepath.Join(cfg.Root, r.bin) // a path in project.yaml is relative to the project root
	}
	if _, err := exec.LookPath(r.bin); err != nil {
		return nil, fmt.Errorf("%s binary (run.%s_bin): %w", r.agent, r.agent, err)
	}
	if cfg.Run.Session == SessionResume && r.agent != AgentCodex {
		r.log.Warn("run.session resume applies to codex only; each claude cycle is a fresh session")
	}
	r.max = cfg.Workflow.StopHook.MaxCycles
	if r.max <= 0 {
		return nil, fmt.Errorf("workflow.stop_hook.max_cycles is %d (for the stop hook: no limit), but a headless run needs a bound: pass --max-cycles N (or set workflow.stop_hook.max_cycles)", r.max)
	}
	runs := RunsDir(cfg)
	if o.RunID == "" {
		// A new id; on the rare clash with an earlier run, a longer suffix.
		for n := 3; ; n++ {
			b := make([]byte, n)
			_, _ = rand.Read(b)
			o.RunID = o.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
			if _, err := os.Lstat(filepath.Join(runs, o.RunID)); errors.Is(err, os.ErrNotExist) || n > 8 {
				break
			}
		}
	}
	if o.RunID == "" || strings.ContainsAny(o.RunID, `/\`) || o.RunID == "." || o.RunID == ".." || strings.HasPrefix(o.RunID, "-") {
		return nil, fmt.Errorf("bad run id %q", o.RunID)
	}
	r.o = o
	r.dir = filepath.Join(runs, o.RunID)
	if _, err := os.Lstat(r.dir); err == nil {
		return nil, r.taken()
	}
	engineSession := "run-" + o.RunID
	var err error
	if r.prompt, err = engine.RenderPrompt(cfg, r.epic, engineSession); err != nil {
		return nil, err
	}
	r.store = &state.Store{Dir: cfg.StateDir(), Warn: func(msg string) { r.log.Warn(msg) }}
	r.state = RunState{RunID: o.RunID, Epic: r.epic, Agent: r.agent, SessionMode: cfg.Run.Session, PID: os.Getpid(),
		EngineSession: engineSession, Status: "running", MaxCycles: r.max, StartedAt: o.Now(), Cycles: []CycleRecord{}}
	if o.MaxDuration > 0 {
		r.state.MaxDuration = o.MaxDuration.String()
	}
	r.p = &progress{out: o.Out, tty: o.TTY, now: o.Now, start: r.state.StartedAt, max: r.max, width: o.Width}
	return r, nil
}

// taken is the error for a run id whose folder exists.
func (r *runner) taken() error { return &takenError{id: r.o.RunID, dir: relTo(r.cfg.Root, r.dir)} }

// takenError is a run id an earlier run holds: a usage error.
type takenError struct{ id, dir string }

func (e *takenError) Error() string {
	return fmt.Sprintf("run id %q is taken: %s holds an earlier run, and a run never overwrites another; choose another --run-id, or leave it out for a new one", e.id, e.dir)
}

// createDir makes the run's folder (0700: the cycle logs hold everything
// the agent's tools printed) and writes run.json (status running, pid), so
// that a live run is listed from its start.
func (r *runner) createDir() error {
	if err := os.MkdirAll(filepath.Dir(r.dir), 0o700); err != nil {
		return fmt.Errorf("run folder: %w", err)
	}
	if err := os.Mkdir(r.dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return r.taken()
		}
		return fmt.Errorf("run folder: %w", err)
	}
	r.save()
	return nil
}

func (r *runner) run(ctx context.Context) (Result, error) {
	r.parent = ctx
	if err := r.createDir(); err != nil {
		code := ExitError
		if _, ok := errors.AsType[*takenError](err); ok {
			code = ExitSetup
		}
		return Result{Code: code}, err
	}
	t, err := r.o.Beads.Tally(ctx, r.epic)
	if ctx.Err() != nil {
		return r.end(ctx, ExitInterrupted, OutcomeInterrupted, "interrupted before the first cycle", nil)
	}
	if err != nil {
		// bd failing, or no such epic, before any agent ran: setup.
		return r.end(ctx, ExitSetup, state.OutcomeBeadsError, "beads error: "+oneLine(err.Error(), 300), fmt.Errorf("epic %s: %w", r.epic, err))
	}
	r.state.ClosedAtStart, r.state.Closed, r.state.Total = t.Closed, t.Closed, t.Total
	r.p.closedAtStart = t.Closed
	r.p.Tally(t.Closed, t.Total)
	limit := fmt.Sprintf("up to %d cycles", r.max)
	if r.o.MaxDuration > 0 {
		limit += " or " + r.o.MaxDuration.String()
	}
	r.p.Printf("runtasks run: epic %s · %s · %s · log %s", r.epic, r.agent, limit, relTo(r.cfg.Root, r.dir))

	// Nothing left: the engine says so without starting an agent. It is
	// asked without counting a cycle first (a dry run); only an end is
	// recorded.
	if t.Total > 0 && t.Closed == t.Total {
		dec, err := r.decide(ctx, "", decideDryRun)
		if err == nil && !dec.Block && dec.Outcome.Ends() {
			dec, err = r.decide(ctx, "", 0)
		}
		if err != nil {
			return r.end(ctx, ExitError, state.OutcomeError, err.Error(), err)
		}
		if !dec.Block && dec.Outcome.Ends() {
			return r.finish(ctx, dec)
		}
	}

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if r.o.MaxDuration > 0 {
		runCtx, cancel = context.WithTimeout(ctx, r.o.MaxDuration)
	}
	defer cancel()
	defer r.ticker(ctx)()

	prompt, resumeID, how := r.prompt, "", 0
	for cycle := 1; ; cycle++ {
		r.p.Cycle(cycle)
		rec, sum, runErr := r.runAgent(runCtx, cycle, prompt, resumeID)
		r.state.Cycles = append(r.state.Cycles, rec)
		last := &r.state.Cycles[len(r.state.Cycles)-1]
		r.save() // the cycle is on record before beads is read
		switch {
		case ctx.Err() != nil:
			r.tally(ctx, last)
			return r.end(ctx, ExitInterrupted, OutcomeInterrupted,
				fmt.Sprintf("interrupted in cycle %d/%d; the agent was stopped", cycle, r.max), nil)
		case runCtx.Err() != nil:
			r.tally(ctx, last)
			return r.end(ctx, ExitLimit, state.OutcomeCapReached,
				fmt.Sprintf("max duration %s reached in cycle %d/%d; the agent was stopped", r.o.MaxDuration, cycle, r.max), nil)
		case runErr != nil:
			r.tally(ctx, last)
			return r.end(ctx, ExitError, "", "agent failed: "+oneLine(runErr.Error(), 300), fmt.Errorf("cycle %d: %w", cycle, runErr))
		}

		if sum.Usage != nil {
			r.usage = *sum.Usage
		}
		dec, err := r.decide(ctx, sum.FinalMessage, how)
		r.usage, how = usage.Usage{}, 0
		if ctx.Err() != nil {
			// Ctrl-C while beads was read: the decision is not to be trusted.
			r.tally(ctx, last)
			return r.end(ctx, ExitInterrupted, OutcomeInterrupted,
				fmt.Sprintf("interrupted after cycle %d/%d", cycle, r.max), nil)
		}
		if err != nil {
			return r.end(ctx, ExitError, state.OutcomeError, err.Error(), err)
		}
		last.Outcome, last.Why = dec.Outcome, dec.Why
		r.tally(ctx, last)
		r.p.Printf("%s · agent exited %d · %s · %s: %s", r.p.head(), rec.ExitCode, r.p.tally(), dec.Outcome, dec.Why)
		if dec.SystemMessage != "" && !dec.Block {
			r.p.Printf("%s", dec.SystemMessage)
		}

		switch {
		case dec.Block:
			if cycle >= r.max {
				why := fmt.Sprintf("max cycles reached (%d/%d) with work left (%s)", cycle, r.max, dec.Why)
				r.record(engine.Decision{Outcome: state.OutcomeCapReached, Why: why, Counts: dec.Counts}, true)
				return r.end(ctx, ExitLimit, state.OutcomeCapReached, why, nil)
			}
			prompt = dec.Reason
			if r.agent == AgentCodex && r.cfg.Run.Session == SessionResume && sum.SessionID != "" {
				resumeID = sum.SessionID
			}
			r.save()
		case dec.Outcome == state.OutcomeCheckpoint:
			// The agent saved its work for a new context: a fresh cycle is one.
			if cycle >= r.max {
				return r.end(ctx, ExitLimit, state.OutcomeCapReached,
					fmt.Sprintf("max cycles reached (%d/%d) after a checkpoint", cycle, r.max), nil)
			}
			// The engine ended the loop; this driver goes on with it.
			prompt, resumeID, how = r.prompt, "", decideRearm
			r.save()
		default:
			return r.finish(ctx, dec)
		}
	}
}

// finish maps an ending decision to the run's exit status (its class's).
func (r *runner) finish(ctx context.Context, dec engine.Decision) (Result, error) {
	code := engine.ExitStatus(dec.Outcome.Class())
	switch {
	case dec.Outcome.Class() == state.ClassError:
		return r.end(ctx, code, dec.Outcome, dec.Why, errors.New(dec.Why))
	case dec.Outcome.Class() == state.ClassIgnored:
		err := fmt.Errorf("the engine did not drive the run (%s: %s)", dec.Outcome, dec.Why)
		return r.end(ctx, ExitError, dec.Outcome, dec.Why, err)
	}
	return r.end(ctx, code, dec.Outcome, dec.Why, nil)
}

// ends are each exit status's run.json status and word in the last line.
var ends = map[int]struct{ status, word string }{
	ExitComplete: {"complete", "complete"}, ExitError: {"error", "failed"}, ExitLimit: {"limit", "stopped"},
	ExitNeedsPerson: {"needs_person", "needs a person"}, ExitInterrupted: {"interrupted", "interrupted"}, ExitSetup: {"error", "failed"},
}

// end records the run's end in run.json (and, for ends the engine did not
// decide, in the decision log) and prints the last line.
func (r *runner) end(ctx context.Context, code int, outcome state.Outcome, why string, err error) (Result, error) {
	now := r.o.Now()
	r.state.Status, r.state.Outcome, r.state.Why = ends[code].status, outcome, why
	r.state.EndedAt, r.state.UpdatedAt = now, now
	r.state.ExitCode = &code
	if outcome == OutcomeInterrupted {
		r.record(engine.Decision{Outcome: outcome, Why: why}, false)
	}
	r.save()
	r.p.Done()
	res := Result{Code: code, RunID: r.o.RunID, Dir: r.dir, Cycles: len(r.state.Cycles), Outcome: outcome, Why: why,
		Tally: beads.Tally{Closed: r.state.Closed, Total: r.state.Total}, ClosedThisRun: r.state.Closed - r.state.ClosedAtStart}
	fmt.Fprintln(r.o.Out, Clean(fmt.Sprintf("runtasks run: epic %s %s after %d cycle(s) (%s): %d/%d closed (%+d this run): %s; exit %d",
		r.epic, ends[code].word, res.Cycles, Elapsed(now.Sub(r.state.StartedAt)), r.state.Closed, r.state.Total, res.ClosedThisRun, why, code)))
	return res, err
}

// How decide asks the engine.
const (
	decideRearm  = 1 << iota // go on after a loop the engine ended (a checkpoint)
	decideDryRun             // judge without recording or counting
)

// decide ends a cycle through engine.Stop, the stop hook's transaction,
// under the run's engine session and with the stop hook's ports.
func (r *runner) decide(ctx context.Context, final string, how int) (engine.Decision, error) {
	ports := r.o.Ports
	if ports.Beads == nil {
		ports.Beads = r.o.Beads
	}
	if ports.Now == nil {
		ports.Now = r.o.Now
	}
	dec, err := engine.Stop(ctx, r.store, r.cfg, engine.StopRequest{Input: r.input(final), EpicFromFlag: true,
		Rearm: how&decideRearm != 0, DryRun: how&decideDryRun != 0}, ports)
	if err != nil {
		return dec, err
	}
	r.log.Info("decision", "run", r.o.RunID, "epic", r.epic, "outcome", dec.Outcome, "block", dec.Block, "why", dec.Why)
	return dec, nil
}

func (r *runner) input(final string) engine.Input {
	return engine.Input{Agent: r.agent, Event: EventRun, SessionID: r.state.EngineSession,
		CWD: r.cfg.Root, FinalMessage: final, Usage: r.usage}
}

// record writes an end the driver decided (cycle budget, interrupt) to the
// decision log and the run's state. reset clears the counter, as an ending
// decision does; an interrupt keeps it, for runtasks status.
func (r *runner) record(dec engine.Decision, reset bool) {
	in := r.input("")
	now := r.o.Now()
	var rec state.Record
	_, err := r.store.Update(in.SessionID, r.epic, func(st *state.State) error {
		rec = engine.NewRecord(in, r.epic, dec, *st, r.cfg, now)
		if reset {
			*st = state.State{Session: st.Session, Epic: st.Epic}
		}
		st.Last, st.UpdatedAt = &rec, now
		return nil
	})
	if err != nil {
		r.log.Warn("state", "err", err)
	}
	if err := r.store.Append(rec); err != nil {
		r.log.Warn("decision log", "err", err)
	}
}

// tally reads closed/total after a cycle (bd list --all: the decision's
// queries, bd ready's, do not give the closed ones); a failure keeps the
// last numbers.
func (r *runner) tally(ctx context.Context, c *CycleRecord) {
	ctx = context.WithoutCancel(ctx)
	t, err := r.o.Beads.Tally(ctx, r.epic)
	if err != nil {
		r.log.Warn("could not count the epic's closed tasks", "err", err)
	} else {
		r.state.Closed, r.state.Total = t.Closed, t.Total
		r.p.Tally(t.Closed, t.Total)
	}
	c.Closed, c.Total = r.state.Closed, r.state.Total
}
