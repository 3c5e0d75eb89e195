package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/prompts"
	"github.com/runtasks/runtasks/internal/shell"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// StopRequest is one stop for Stop to decide.
type StopRequest struct {
	Input        Input // Stop fills its Epic and its Claims
	EpicFromFlag bool  // the configuration's epic came from --epic, which wins over the binding
	// DryRun judges without changing anything: a fresh state, no decision
	// log, no beads changes, no binding released, no notify.
	DryRun bool
}

// Ports are the engine's ways to the outside world.
type Ports struct {
	Beads Tracker
	// Uncommitted lists the work tree's changed paths (git status
	// --porcelain; none when clean); nil: the checkpoint promise cannot check git.
	Uncommitted func(ctx context.Context) ([]string, error)
	Worktrees   func(ctx context.Context) ([]git.Worktree, error) // the project's git worktrees; nil turns stuck-task detection off
	// Runner runs a command check's shell command in dir (shell.Runner.Run); nil makes them an error.
	Runner  func(ctx context.Context, dir, command string, timeout time.Duration) (shell.Result, error)
	Updater StatusUpdater // moves stuck tasks; nil reports them unmoved
	// Usage reads a driven stop's token usage from the agent's transcript;
	// nil keeps the Input's (runtasks run reads it from the agent's events).
	Usage usage.UsageReader
	// Notify hands a recorded decision to workflow.notify (nil: none).
	Notify func(Input, Decision)
	Now    func() time.Time // required
}

// Stop is the one stop transaction of every entry point (stop-hook, run,
// each worker, check): it resolves the epic (--epic > the session's binding
// > RUNTASKS_EPIC > workflow.epic), runs Decide under the session's state
// lock, applies its effects, records the decision and hands it to
// Ports.Notify. A failure still returns a Decision that allows the stop
// and tells the person why; the error is for the caller's log.
func Stop(ctx context.Context, s *state.Store, cfg *config.Config, req StopRequest, p Ports) (dec Decision, err error) {
	in := req.Input
	defer func() { // not on a panic: dec is empty then, and nothing was decided
		if p.Notify != nil && !req.DryRun && dec.Outcome != "" {
			p.Notify(in, dec)
		}
	}()
	began := p.Now()
	if !cfg.Workflow.StopHook.Enabled {
		return Decision{Outcome: state.OutcomeDisabled, Why: "stop hook disabled"}, nil
	}

	binding, epic := resolveEpic(s, cfg, in, req.EpicFromFlag)
	in.Claims, in.Epic = binding.Claims, epic
	// An undriven session is left alone, unless a task it claimed still
	// waits for its RESULTS.md (Decide's results stage then blocks).
	if !Driven(in, cfg) && len(state.UntouchedResults(in.Claims)) == 0 {
		return Decision{Outcome: state.OutcomeNotDriven, Why: "session not driven", Epic: in.Epic}, nil
	}
	if b := cfg.Workflow.Budget; (b.EpicTokens > 0 || b.EpicCost > 0) && in.Epic != "" {
		var err error
		if in.OthersSpent, err = s.SpentByEpic(in.SessionID); err != nil {
			s.Warnf("could not sum the epic's spending; its budget counts this session only: %v", err)
		}
	}

	env := Env{Ports: p, Now: p.Now(), Verdicts: req.DryRun}
	if in.Epic != "" {
		if env.Prompt, err = RenderPrompt(cfg, in.Epic, in.SessionID); err != nil {
			return failed(in.Epic, err), err
		}
	}

	key := cmp.Or(in.Epic, state.NoEpic)
	if req.DryRun {
		dec, _ = Decide(ctx, in, state.State{Session: in.SessionID, Epic: key}, cfg, env)
		return dec, nil
	}
	var rec state.Record
	thisStop := stopMark(in)
	_, err = s.Update(in.SessionID, key, func(st *state.State) error {
		// Two runtasks stop hooks of one stop (a project and a user install
		// that both fire) reach here one after the other, under the state
		// lock. The second is not a new stop: it began before the first
		// one's decision was recorded (the agent waits for every hook before
		// it goes on), or the transcript has not grown since. It answers
		// nothing (the first answer stands) and is not counted.
		if duplicate(st.LastStop, thisStop, began) {
			dec = Decision{Outcome: state.OutcomeDuplicate, Epic: in.Epic, Cycle: st.Cycles,
				Why: "a second runtasks stop hook answered the same stop: counted once (runtasks doctor lists the hooks)"}
			return nil
		}
		// Arming again after the loop ended starts it afresh (arm times
		// are kept to the second).
		if st.Ended != "" && binding.Epic == in.Epic && !binding.ArmedAt.IsZero() &&
			!binding.ArmedAt.Before(st.EndedAt.Truncate(time.Second)) {
			*st = state.State{Session: st.Session, Epic: st.Epic}
		}
		mark := st.UsageMark // not read: the next stop reads from the same place
		if p.Usage != nil {
			// The mark is where this loop's previous stop read. A session
			// armed since (for this epic again, after working on another or
			// unarmed) reads back to its previous stop instead: what it did
			// in between is not this loop's.
			var from usage.UsageMark
			if st.UsageMark != nil && !binding.ArmedAt.After(st.UpdatedAt) {
				from = *st.UsageMark
			}
			if u, m, err := p.Usage(from); err != nil {
				s.Warnf("could not read the token usage; recorded without it: %v", err)
			} else {
				in.Usage, mark = u, &m
			}
		}
		var aud audit
		if cfg.Workflow.Verify.On() && in.Epic != "" {
			aud = runAudit(ctx, s, cfg, in, *st, binding.ArmedAt, env)
		}
		var next state.State
		dec, next = Decide(ctx, in, *st, cfg, env)
		if cfg.Workflow.Verify.On() && in.Epic != "" {
			dec = aud.apply(cfg, dec, &next, *st)
		}
		next.UsageMark = mark
		for _, t := range dec.Stuck {
			if p.Updater != nil {
				dec.Actions = append(dec.Actions, fmt.Sprintf("%s stuck (%s): %s", t.ID, t.Reason, applyStuck(ctx, p.Updater, t, env.Now)))
			}
		}
		if !dec.Block && dec.Outcome.Final() && !req.EpicFromFlag && binding.Epic != "" { // the binding chose the epic
			if _, err := s.UpdateBinding(in.SessionID, func(b *state.Binding) error {
				if b.Epic == in.Epic { // its claims stay
					b.Epic, b.ArmedAt = "", time.Time{}
				}
				return nil
			}); err != nil {
				s.Warnf("could not release the session's binding: %v", err)
			} else {
				dec.Why += "; the session's binding to " + in.Epic + " is released"
			}
		}
		rec = NewRecord(in, key, dec, env.Now)
		next.Last = &rec
		thisStop.DecidedAt = p.Now()
		next.LastStop = &thisStop
		*st = next
		return nil
	})
	if err != nil {
		err = fmt.Errorf("state: %w", err)
		return failed(in.Epic, err), err
	}
	if dec.Outcome == state.OutcomeDuplicate {
		s.Warnf("session %s: %s", in.SessionID, dec.Why)
		return dec, nil
	}
	if err := s.Append(rec); err != nil {
		s.Warnf("decision log: %v", err)
	}
	return dec, nil
}

// stopMark identifies a stop as the agent made it: its event, transcript
// and final message, and the transcript's size now (-1 without one).
func stopMark(in Input) state.StopMark {
	sum := sha256.Sum256([]byte(in.Event + "\x00" + in.TranscriptPath + "\x00" + in.FinalMessage + "\x00"))
	m := state.StopMark{Key: hex.EncodeToString(sum[:12]), Size: -1}
	if fi, err := os.Stat(in.TranscriptPath); in.TranscriptPath != "" && err == nil {
		m.Size = fi.Size()
	}
	return m
}

// duplicate reports whether the stop marked m, which began at began, is
// the one the last decision answered (see Stop).
func duplicate(last *state.StopMark, m state.StopMark, began time.Time) bool {
	return last != nil && last.Key == m.Key && (began.Before(last.DecidedAt) || (m.Size >= 0 && m.Size == last.Size))
}

// failed is the decision when runtasks itself cannot decide: the stop is
// allowed and the person told.
func failed(epic string, err error) Decision {
	msg := OneLine(err.Error(), 400)
	return Decision{Outcome: state.OutcomeError, Why: "runtasks error: " + msg, Epic: epic,
		SystemMessage: "runtasks: " + msg + "; stop allowed."}
}

// RenderPrompt renders the orchestration prompt (prompts.run_tasks, else embedded).
func RenderPrompt(cfg *config.Config, epic, session string) (string, error) {
	tmpl, err := prompts.Load(cfg.Path(cfg.Prompts.RunTasks))
	if err != nil {
		return "", err
	}
	return prompts.Render(tmpl, prompts.Data{Epic: epic, Session: session, MaxCycles: cfg.Workflow.StopHook.MaxCycles})
}

// CheckBound refuses a loop that nobody watches (runtasks run) when
// nothing caps it: max_cycles 0 means "no limit" to the stop hook.
func CheckBound(cfg *config.Config) error {
	if n := cfg.Workflow.StopHook.MaxCycles; n <= 0 {
		return fmt.Errorf("workflow.stop_hook.max_cycles is %d (for the stop hook: no limit), but a headless run needs a bound: pass --max-cycles N (or set workflow.stop_hook.max_cycles)", n)
	}
	return nil
}

// ConfigErrorDecision allows a stop when the configuration could not be
// read, telling the person runtasks is off until it is fixed.
func ConfigErrorDecision(err error) Decision {
	msg := OneLine(err.Error(), 600)
	return Decision{Outcome: state.OutcomeConfigError, Why: "configuration error: " + msg,
		SystemMessage: "runtasks is off for this project until its configuration is fixed: " + msg +
			" (check it with `runtasks config validate`)."}
}

// Shell is the agent session whose shell runs a command, from the
// variables each agent exports to the commands its model runs
// (hook.ShellSession); zero in a person's own shell.
type Shell struct {
	Agent   string // claude, codex, gemini ("" outside an agent)
	Session string // "" when the agent does not say
	Var     string // the variable that told the session
}

// Disarm releases session's binding (runtasks disarm) and returns the epic
// it was armed for. The loop is the person's: a disarm run by that same
// session's agent (by) releases nothing; it is recorded as needing a person
// (OutcomeSelfDisarm) and the decision returned for notify.
func Disarm(s *state.Store, cfg *config.Config, session string, by Shell, now time.Time) (released string, refused *Decision, err error) {
	if by.Session == "" || by.Session != session {
		_, err = s.UpdateBinding(session, func(b *state.Binding) error {
			released, b.Epic, b.ArmedAt = b.Epic, "", time.Time{}
			return nil
		})
		return released, nil, err
	}
	b, err := s.Binding(session)
	if err != nil || b.Epic == "" {
		return "", nil, err
	}
	why := fmt.Sprintf("needs a person: the session's own agent (%s, %s) ran runtasks disarm; refused: the loop stays armed for %s",
		by.Agent, by.Var, b.Epic)
	dec := Decision{Outcome: state.OutcomeSelfDisarm, Epic: b.Epic, Why: why, Max: MaxCycles(cfg, b.Epic),
		SystemMessage: "runtasks: " + why + "."}
	rec := NewRecord(Input{SessionID: session, Agent: by.Agent, Event: "disarm"}, b.Epic, dec, now.UTC())
	if _, err := s.Update(session, b.Epic, func(st *state.State) error {
		rec.Cycle, _ = st.Count() // the loop's count, unchanged: a disarm is no cycle
		st.Last = &rec
		return nil
	}); err != nil {
		return "", &dec, err
	}
	return "", &dec, s.Append(rec)
}
