// Package headless drives an epic with a non-interactive agent, one agent
// run per cycle (runtasks run). Before the first cycle and after each run
// it asks engine.Stop what comes next: it has no end rule of its own.
package headless

import (
	"cmp"
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/notify"
	"github.com/runtasks/runtasks/internal/state"
)

// Beads is what a run asks of beads (*beads.Client): the engine's queries and the tally.
type Beads interface {
	engine.Tracker
	Tally(ctx context.Context, epic string) (beads.Tally, error)
}

// Options configure one run.
type Options struct {
	Config  *config.Config // required: names the epic and the agent; the loop's rules are the engine's
	Args    []string       // the user's extra agent arguments
	Beads   Beads
	Ports   engine.Ports // each cycle's end goes through engine.Stop; each notify event is handed on once
	Environ []string     // the agent's environment
	Out     io.Writer    // progress; TTY draws a live status line with a bar
	TTY     bool
	Now     func() time.Time
	Log     *log.Logger
	LogOut  io.Writer       // where Log writes when on a terminal: its lines then clear the live lines first
	Width   func() int      // the terminal's width now (nil or 0: DefaultWidth)
	Grace   time.Duration   // after SIGINT, before the agent's group is killed (default 10 s)
	Kill    <-chan struct{} // closed (a second Ctrl-C): kill the agent's group at once
	// RunID names the run (default: UTC time and a random suffix); an id
	// whose folder exists is refused.
	RunID string
}

// Result is how a run ended.
type Result struct {
	Code          int
	Dir           string // the run's folder (run.json, each cycle's event log)
	Cycles        int    // agent runs started
	Outcome       state.Outcome
	Tally         beads.Tally
	ClosedThisRun int // descendants closed since the run started
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

// RunState is the run's record, run.json, rewritten after every cycle.
type RunState struct {
	RunID         string `json:"run_id"`
	Epic          string `json:"epic"`
	Agent         string `json:"agent"`
	SessionMode   string `json:"session_mode"`
	EngineSession string `json:"engine_session"`
	Status        string `json:"status"` // running, complete, limit, needs_person, error, interrupted
	PID           int    `json:"pid"`    // runtasks' process: a "running" record whose pid is gone was killed
	// Cycle and MaxCycles are the loop's count and cap as the engine's last
	// decision gave them; Deadline is when workflow.max_duration ends it.
	Cycle         int           `json:"cycle"`
	MaxCycles     int           `json:"max_cycles"`
	Deadline      time.Time     `json:"deadline,omitzero"`
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
	o     Options
	cfg   *config.Config
	epic  string
	agent string
	bin   string
	parse Parser
	store *state.Store
	state RunState
	dir   string
	p     *progress
	log   *log.Logger
	// parent is Run's ctx (an interrupt); the agent's may end earlier (the deadline).
	parent       context.Context
	agentRunning atomic.Bool // the live line's tally is refreshed only then
	workDir      string      // where the agent runs ("" = the project root)
}

// Run drives the epic until the engine ends the loop, the agent fails or ctx ends.
func Run(ctx context.Context, o Options) (Result, error) {
	o.Ports.Notify = onceEach(o.Ports.Notify)
	r, err := newRunner(o)
	if err != nil { // nothing ran
		return Result{Code: engine.ExitUsage}, err
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
	o.Grace = cmp.Or(o.Grace, 10*time.Second)
	if o.Ports.Beads == nil {
		o.Ports.Beads = o.Beads
	}
	if o.Ports.Now == nil {
		o.Ports.Now = o.Now
	}
	// A new run id (a run's or a workers' run's); on the rare clash with an
	// earlier run, a longer suffix.
	for n := 3; o.RunID == ""; n++ {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		o.RunID = o.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
		if _, err := os.Lstat(filepath.Join(RunsDir(o.Config), o.RunID)); err == nil && n <= 8 {
			o.RunID = ""
		}
	}
	return o
}

func newRunner(o Options) (*runner, error) {
	cfg := o.Config
	o = o.withDefaults()
	runs := RunsDir(cfg)
	r := &runner{o: o, cfg: cfg, epic: cfg.Workflow.Epic, agent: cfg.Run.Agent, log: o.Log}
	if r.epic == "" {
		return nil, errors.New("no epic: give --epic, RUNTASKS_EPIC or workflow.epic")
	}
	if !cfg.Workflow.StopHook.Enabled {
		return nil, errors.New("workflow.stop_hook.enabled is false: the engine would drive nothing")
	}
	var err error
	if r.parse, err = ParserFor(r.agent); err != nil {
		return nil, err
	}
	r.bin = map[string]string{AgentClaude: cfg.Run.ClaudeBin, AgentCodex: cfg.Run.CodexBin}[r.agent]
	if !filepath.IsAbs(r.bin) && strings.ContainsRune(r.bin, filepath.Separator) {
		r.bin = filepath.Join(cfg.Root, r.bin) // a path in project.yaml is relative to the project root
	}
	if _, err := exec.LookPath(r.bin); err != nil {
		return nil, fmt.Errorf("%s binary (run.%s_bin): %w", r.agent, r.agent, err)
	}
	if cfg.Run.Session == SessionResume && r.agent != AgentCodex {
		r.log.Warn("run.session resume applies to codex only; each claude cycle is a fresh session")
	}
	if err := engine.CheckBound(cfg); err != nil {
		return nil, err
	}
	if o.RunID == "" || strings.ContainsAny(o.RunID, `/\`) || o.RunID == "." || o.RunID == ".." || strings.HasPrefix(o.RunID, "-") {
		return nil, fmt.Errorf("bad run id %q", o.RunID)
	}
	r.dir = filepath.Join(runs, o.RunID)
	if _, err := os.Lstat(r.dir); err == nil {
		return nil, r.taken()
	}
	engineSession := "run-" + o.RunID
	// A prompt that cannot be rendered fails before anything starts.
	if _, err := engine.RenderPrompt(cfg, r.epic, engineSession); err != nil {
		return nil, err
	}
	r.store = &state.Store{Dir: cfg.StateDir(), Warn: func(msg string) { r.log.Warn(msg) }}
	r.state = RunState{RunID: o.RunID, Epic: r.epic, Agent: r.agent, SessionMode: cfg.Run.Session, PID: os.Getpid(),
		EngineSession: engineSession, Status: "running", StartedAt: o.Now(), Cycles: []CycleRecord{}}
	r.p = &progress{out: o.Out, tty: o.TTY, now: o.Now, start: r.state.StartedAt, width: o.Width}
	logAbove(o, r.p)
	return r, nil
}

// taken is the usage error of a run id an earlier run holds.
func (r *runner) taken() error {
	return fmt.Errorf("run id %q is taken: %s holds an earlier run, and a run never overwrites another; choose another --run-id, or leave it out for a new one", r.o.RunID, claim.Rel(r.cfg.Root, r.dir))
}

// createDir makes the run's folder (0700: the logs hold what the agent's
// tools printed) and writes run.json, so a live run is listed from its
// start. A failure is the exit status's (engine.ExitUsage: the id is taken).
func (r *runner) createDir() (int, error) {
	// The state dir's .gitignore comes first: an agent's `git add -A` never takes the logs in.
	if err := state.EnsureStateDir(r.cfg.StateDir()); err != nil {
		return engine.ExitFailed, err
	}
	if err := os.MkdirAll(filepath.Dir(r.dir), 0o700); err != nil {
		return engine.ExitFailed, fmt.Errorf("run folder: %w", err)
	}
	if err := os.Mkdir(r.dir, 0o700); errors.Is(err, os.ErrExist) {
		return engine.ExitUsage, r.taken()
	} else if err != nil {
		return engine.ExitFailed, fmt.Errorf("run folder: %w", err)
	}
	r.save()
	return 0, nil
}

// over is how a run ended; nil while it goes on.
type over struct {
	res Result
	err error
}

func (r *runner) run(ctx context.Context) (Result, error) {
	r.parent = ctx
	if code, err := r.createDir(); err != nil {
		return Result{Code: code}, err
	}
	t, err := r.o.Beads.Tally(ctx, r.epic)
	if ctx.Err() != nil {
		return r.end(engine.ExitInterrupted, state.OutcomeInterrupted, "interrupted before the first cycle", nil)
	}
	if err != nil {
		// bd failing, or no such epic, before any agent ran: setup.
		return r.end(engine.ExitUsage, state.OutcomeBeadsError, "beads error: "+oneLine(err.Error(), 300), fmt.Errorf("epic %s: %w", r.epic, err))
	}
	r.state.ClosedAtStart, r.state.Closed, r.state.Total = t.Closed, t.Closed, t.Total
	r.p.closedAtStart = t.Closed
	r.p.Tally(t.Closed, t.Total)
	defer r.ticker(ctx)()

	// The engine's first block is cycle 1, its reason the first prompt; an
	// epic already complete starts no agent.
	r.p.Printf("runtasks run: epic %s · %s · log %s", r.epic, r.agent, claim.Rel(r.cfg.Root, r.dir))
	dec, out := r.step(ctx, nil, nil, "")
	resumeID := ""
	for out == nil {
		last, sum, stopped := r.agentCycle(ctx, dec, "the agent was stopped", func(ctx context.Context) (CycleRecord, Summary, error) {
			return r.runAgent(ctx, dec.Cycle, dec.Reason, resumeID)
		})
		if out = stopped; out != nil {
			break
		}
		dec, out = r.step(ctx, &sum, last, fmt.Sprintf("agent exited %d", last.ExitCode))
		resumeID = ""
		if r.agent == AgentCodex && r.cfg.Run.Session == SessionResume && !dec.Fresh {
			resumeID = sum.SessionID
		}
	}
	return out.res, out.err
}

// agentCycle runs the agent of the cycle dec asked for until the engine's
// deadline and keeps its record; it ends the run on an interrupt (note says
// what became of the work) or a failure.
func (r *runner) agentCycle(ctx context.Context, dec engine.Decision, note string,
	run func(context.Context) (CycleRecord, Summary, error)) (*CycleRecord, Summary, *over) {
	r.p.Cycle(dec.Cycle, dec.Max)
	agentCtx, cancel := ctx, context.CancelFunc(func() {})
	if !dec.Deadline.IsZero() {
		agentCtx, cancel = context.WithTimeout(ctx, dec.Deadline.Sub(r.o.Now()))
	}
	rec, sum, runErr := run(agentCtx)
	cancel()
	r.state.Cycles = append(r.state.Cycles, rec)
	last := &r.state.Cycles[len(r.state.Cycles)-1]
	r.save() // the cycle is on record before beads is read
	switch {
	case ctx.Err() != nil:
		r.tally(ctx, last)
		return last, sum, ended(r.end(engine.ExitInterrupted, state.OutcomeInterrupted, fmt.Sprintf("interrupted in cycle %s; %s", r.count(), note), nil))
	case runErr != nil:
		r.tally(ctx, last)
		return last, sum, ended(r.end(engine.ExitFailed, "", "agent failed: "+oneLine(runErr.Error(), 300), fmt.Errorf("cycle %d: %w", rec.N, runErr)))
	}
	return last, sum, nil
}

// step asks the engine about the stop that ends a cycle (sum and last: the
// agent run and its record, nil before the first), says what happened
// (what) and ends the run unless the engine blocks.
func (r *runner) step(ctx context.Context, sum *Summary, last *CycleRecord, what string) (engine.Decision, *over) {
	dec, err := r.stop(ctx, sum, false)
	switch {
	case ctx.Err() != nil:
		// Ctrl-C while beads was read: the decision is not to be trusted.
		r.tally(ctx, last)
		return dec, ended(r.end(engine.ExitInterrupted, state.OutcomeInterrupted, fmt.Sprintf("interrupted after cycle %s", r.count()), nil))
	case err != nil:
		return dec, ended(r.end(engine.ExitFailed, state.OutcomeError, err.Error(), err))
	}
	r.state.Cycle, r.state.MaxCycles = dec.Cycle, dec.Max
	r.state.Deadline = cmp.Or(dec.Deadline, r.state.Deadline) // zero: no max_duration
	if last != nil || !dec.Block {
		r.tally(ctx, last) // other workers closed tasks too
	}
	if last != nil {
		last.Outcome, last.Why = dec.Outcome, dec.Why
		r.p.Printf("%s · %s · %s · %s: %s", r.p.head(), what, r.p.tally(), dec.Outcome, dec.Why)
		if dec.SystemMessage != "" && !dec.Block {
			r.p.Printf("%s", dec.SystemMessage)
		}
	}
	if dec.Block {
		r.save()
		return dec, nil
	}
	// An ending decision exits with its class's status.
	code, err := engine.ExitStatus(dec.Outcome.Class()), error(nil)
	switch dec.Outcome.Class() {
	case state.ClassError:
		err = errors.New(dec.Why)
	case state.ClassIgnored:
		code, err = engine.ExitFailed, fmt.Errorf("the engine did not drive the run (%s: %s)", dec.Outcome, dec.Why)
	}
	return dec, ended(r.end(code, dec.Outcome, dec.Why, err))
}

// stop is engine.Stop for the end of a cycle (sum) under the run's session.
func (r *runner) stop(ctx context.Context, sum *Summary, dryRun bool) (engine.Decision, error) {
	in := engine.Input{Agent: r.agent, Event: engine.EventRun, SessionID: r.state.EngineSession}
	if sum != nil {
		in.FinalMessage = sum.FinalMessage
		if sum.Usage != nil {
			in.Usage = *sum.Usage
		}
	}
	dec, err := engine.Stop(ctx, r.store, r.cfg, engine.StopRequest{Input: in, EpicFromFlag: true, DryRun: dryRun}, r.o.Ports)
	if err == nil && !dryRun {
		r.log.Info("decision", "run", r.o.RunID, "epic", r.epic, "outcome", dec.Outcome, "block", dec.Block, "cycle", dec.Cycle, "why", dec.Why)
	}
	return dec, err
}

// count is the loop's "N/MAX".
func (r *runner) count() string { return fmt.Sprintf("%d/%d", r.state.Cycle, r.state.MaxCycles) }

func ended(res Result, err error) *over { return &over{res, err} }

// ends are each exit status's run.json status and word in the last line.
var ends = map[int]struct{ status, word string }{
	engine.ExitOK: {"complete", "complete"}, engine.ExitFailed: {"error", "failed"}, engine.ExitWorkLeft: {"limit", "stopped"},
	engine.ExitNeedsPerson: {"needs_person", "needs a person"}, engine.ExitInterrupted: {"interrupted", "interrupted"}, engine.ExitUsage: {"error", "failed"},
}

// end records the run's end (an interrupt in the decision log too, for
// runtasks status; the counters stay) and prints the last line.
func (r *runner) end(code int, outcome state.Outcome, why string, err error) (Result, error) {
	now := r.o.Now()
	r.state.Status, r.state.Outcome, r.state.Why = ends[code].status, outcome, why
	r.state.EndedAt, r.state.UpdatedAt = now, now
	r.state.ExitCode = &code
	if outcome == state.OutcomeInterrupted {
		in := engine.Input{Agent: r.agent, Event: engine.EventRun, SessionID: r.state.EngineSession}
		rec := engine.NewRecord(in, r.epic, engine.Decision{Outcome: outcome, Why: why, Cycle: r.state.Cycle, Max: r.state.MaxCycles}, now)
		if _, err := r.store.Update(in.SessionID, r.epic, func(st *state.State) error {
			st.Last, st.UpdatedAt = &rec, now
			return nil
		}); err != nil {
			r.log.Warn("state", "err", err)
		}
		if err := r.store.Append(rec); err != nil {
			r.log.Warn("decision log", "err", err)
		}
	}
	r.save()
	r.p.Done()
	res := Result{Code: code, Dir: r.dir, Cycles: len(r.state.Cycles), Outcome: outcome,
		Tally: beads.Tally{Closed: r.state.Closed, Total: r.state.Total}, ClosedThisRun: r.state.Closed - r.state.ClosedAtStart}
	fmt.Fprintln(r.o.Out, Clean(fmt.Sprintf("runtasks run: epic %s %s after %d cycle(s) (%s): %d/%d closed (%+d this run): %s; exit %d",
		r.epic, ends[code].word, res.Cycles, Elapsed(now.Sub(r.state.StartedAt)), r.state.Closed, r.state.Total, res.ClosedThisRun, why, code)))
	return res, err
}

// tally reads closed/total into the run and c; a failure keeps the last numbers.
func (r *runner) tally(ctx context.Context, c *CycleRecord) {
	t, err := r.o.Beads.Tally(context.WithoutCancel(ctx), r.epic)
	if err != nil {
		r.log.Warn("could not count the epic's closed tasks", "err", err)
	} else {
		r.state.Closed, r.state.Total = t.Closed, t.Total
		r.p.Tally(t.Closed, t.Total)
	}
	if c != nil {
		c.Closed, c.Total = r.state.Closed, r.state.Total
	}
}

// onceEach hands each notify event on once per run, whichever worker sees it.
func onceEach(send func(engine.Input, engine.Decision)) func(engine.Input, engine.Decision) {
	if send == nil {
		return nil
	}
	var sent sync.Map
	return func(in engine.Input, dec engine.Decision) {
		if e := notify.EventFor(dec); e != "" {
			if _, dup := sent.LoadOrStore(e, true); !dup {
				send(in, dec)
			}
		}
	}
}
