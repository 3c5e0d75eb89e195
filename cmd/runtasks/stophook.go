package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/beads"
	"github.com/runtasks/runtasks/git"
	"github.com/runtasks/runtasks/hook"
	"github.com/runtasks/runtasks/orchestrator"
	"github.com/runtasks/runtasks/prompts"
	"github.com/runtasks/runtasks/shell"
)

func init() { commands = append(commands, newStopHookCmd) }

type stopHookOptions struct {
	In       io.Reader
	Out, Err io.Writer
	Agent    string
	// LoadConfig loads the configuration from the hook's cwd.
	LoadConfig func(startDir string) (*orchestrator.Config, error)
	// Tracker and Workspace build the engine's dependencies for a config.
	Tracker   func(cfg *orchestrator.Config) orchestrator.Tracker
	Workspace func(cfg *orchestrator.Config) orchestrator.Workspace
	Now       func() time.Time
	LogLevel  string
	// EpicFlag is true when --epic was given: it wins over a session binding.
	EpicFlag bool
}

func newStopHookCmd(f *Factory) *cobra.Command {
	opts := &stopHookOptions{}
	cmd := &cobra.Command{
		Use:   "stop-hook",
		Short: "Decide whether the agent may stop (run by the agent's Stop hook)",
		Long: `stop-hook reads the agent's Stop hook input on stdin and answers on stdout.

While the epic's beads show ready or in-progress work, it blocks the stop and
re-feeds the orchestration prompt with a one-line state. A <promise> in the
agent's final message is accepted only when beads agrees. It allows the stop
when the epic is complete, when only blocked work remains (escalation to a
person), at max_cycles, and when bd fails (on_beads_error: allow).

Without an epic (--epic, RUNTASKS_EPIC, workflow.epic) and without the
done-token contract it allows every stop and prints nothing.

stdout carries only the agent's JSON; logs go to stderr or log.file.`,
		Example: `  # .claude/settings.json
  {"hooks":{"Stop":[{"hooks":[{"type":"command","command":"runtasks stop-hook --epic bd-x7y8","timeout":30}]}]}}

  # the TASKMASTER_DONE contract, no epic
  runtasks stop-hook --taskmaster

  # try it by hand
  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"Stop","last_assistant_message":"done"}' | runtasks stop-hook --epic bd-x7y8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In, opts.Out, opts.Err = f.In, f.Out, f.Err
			opts.LogLevel, _ = cmd.Flags().GetString("log-level")
			opts.LoadConfig = func(dir string) (*orchestrator.Config, error) {
				cfg, _, err := f.LoadConfig(cmd, dir)
				return cfg, err
			}
			opts.Tracker = func(cfg *orchestrator.Config) orchestrator.Tracker { return newBeadsClient(f, cfg) }
			opts.Workspace = func(cfg *orchestrator.Config) orchestrator.Workspace { return git.Repo{Dir: cfg.Root} }
			opts.Now = f.Now
			opts.EpicFlag = cmd.Flags().Changed("epic")
			return runStopHook(cmd.Context(), opts)
		},
	}
	cmd.Flags().String("epic", "", "epic whose beads drive the session (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().Int("max-cycles", 0, "blocks before the stop is allowed anyway (workflow.stop_hook.max_cycles)")
	cmd.Flags().Bool("taskmaster", false, "require the TASKMASTER_DONE::<session_id> line (workflow.done_token.required)")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "agent protocol: claude, codex, gemini or cursor (default: detected from the input)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	return cmd
}

// newBeadsClient builds the bd client a configuration describes; bd runs in
// the factory's environment.
func newBeadsClient(f *Factory, cfg *orchestrator.Config) *beads.Client {
	return &beads.Client{Bin: cfg.Beads.Bin, Dir: cfg.BeadsDir(), WorkDir: cfg.Root, Timeout: cfg.Beads.Timeout, Env: f.Environ()}
}

// runStopHook never fails the agent: every problem allows the stop and is
// reported on stderr (and in the log), so a broken runtasks cannot trap an
// agent. Exit status is always 0.
func runStopHook(ctx context.Context, o *stopHookOptions) error {
	payload, err := hook.Parse(o.In)
	if err != nil {
		fmt.Fprintf(o.Err, "runtasks stop-hook: %v; stop allowed\n", err)
		return nil
	}
	cfg, err := o.LoadConfig(hookStart(payload.CWD))
	if err != nil {
		fmt.Fprintf(o.Err, "runtasks stop-hook: configuration: %v; stop allowed\n", err)
		return nil
	}
	logger, closeLog := newLogger(cfg, o.Err, o.LogLevel)
	defer closeLog()

	agent := o.Agent
	if agent == "" {
		agent = hook.Detect(payload)
	}
	if !hook.Known(agent) {
		logger.Error("unknown agent; stop allowed", "agent", agent)
		return nil
	}
	in, inErr := hook.Input(agent, payload, cfg.Workflow.DoneToken.Required)
	// The epic: --epic > the session's binding (runtasks arm, /run-tasks) >
	// RUNTASKS_EPIC > workflow.epic. An unbound session with no static epic
	// stays untouched.
	bindings := &orchestrator.Store{Dir: cfg.StateDir(), Warn: func(msg string) { logger.Warn(msg) }}
	bound, err := bindings.ApplyBinding(cfg, &in, o.EpicFlag)
	if err != nil {
		logger.Warn("session binding unreadable; judging without it", "err", err)
	}
	if !orchestrator.Driven(in, cfg) {
		if len(in.Claims) > 0 {
			if out := hook.EncodeStop(agent, bindings.GuardResults(in, cfg, orchestrator.Decision{Outcome: orchestrator.OutcomeNotDriven}, bound)); out != nil {
				o.Out.Write(out)
			}
		}
		logger.Debug("not driven; stop allowed", "session", payload.SessionID)
		return nil
	}
	if inErr != nil {
		logger.Warn("could not read the final message; judging without it", "err", inErr)
	}

	dec, err := decideStop(ctx, in, cfg, o, logger)
	if err != nil {
		logger.Error("stop allowed", "err", err)
		dec = orchestrator.Decision{Outcome: orchestrator.OutcomeNotDriven,
			SystemMessage: "runtasks: " + err.Error() + "; stop allowed."}
	} else {
		dec = bindings.GuardResults(in, cfg, dec, bound)
	}
	if out := hook.EncodeStop(agent, dec); out != nil {
		o.Out.Write(out)
	}
	return nil
}

// stateEpic keys the state of the done-token contract when no epic is set.
const stateEpic = "-"

// decideStop runs the engine under the session's state lock and records the
// decision. An unusable state directory is an error: without a counter no
// cap can hold, so the caller allows the stop.
func decideStop(ctx context.Context, in orchestrator.Input, cfg *orchestrator.Config, o *stopHookOptions, logger *log.Logger) (orchestrator.Decision, error) {
	tmpl, err := prompts.Load(cfg.PromptPath())
	if err != nil {
		return orchestrator.Decision{}, err
	}
	prompt, err := prompts.Render(tmpl, prompts.Data{Epic: cfg.Workflow.Epic, Session: in.SessionID, MaxCycles: cfg.Workflow.StopHook.MaxCycles})
	if err != nil {
		return orchestrator.Decision{}, err
	}
	store := &orchestrator.Store{Dir: cfg.StateDir(), Warn: func(msg string) { logger.Warn(msg) }}
	epic := cfg.Workflow.Epic
	if epic == "" {
		epic = stateEpic
	}
	env := orchestrator.Env{Beads: o.Tracker(cfg), Workspace: o.Workspace(cfg), Prompt: prompt, Now: o.Now()}
	// Stuck-task detection needs the worktrees (git.Repo lists them) and a
	// tracker that can change statuses (*beads.Client).
	if wl, ok := env.Workspace.(orchestrator.WorktreeLister); ok {
		env.Worktrees = wl
	}
	updater, _ := env.Beads.(orchestrator.StatusUpdater)
	if len(cfg.Workflow.Checks) > 0 {
		env.Runner = shellRunner{shell.Runner{}}
	}
	var (
		dec orchestrator.Decision
		rec orchestrator.Record
	)
	st, err := store.Update(in.SessionID, epic, func(st *orchestrator.State) error {
		var next orchestrator.State
		dec, next = orchestrator.Decide(ctx, in, *st, cfg, env)
		if len(dec.Stuck) > 0 {
			dec.Actions = append(dec.Actions, orchestrator.ApplyStuck(ctx, updater, dec.Stuck, env.Now)...)
		}
		rec = orchestrator.NewRecord(in, epic, dec, next, cfg, env.Now)
		next.Last = &rec
		*st = next
		return nil
	})
	if err != nil {
		return orchestrator.Decision{}, fmt.Errorf("state: %w", err)
	}
	if err := store.Append(rec); err != nil {
		logger.Warn("decision log", "err", err)
	}
	lvl := log.InfoLevel
	if dec.Outcome == orchestrator.OutcomeBeadsError {
		lvl = log.WarnLevel
	}
	logger.Log(lvl, "decision", "session", in.SessionID, "epic", epic, "outcome", dec.Outcome, "block", dec.Block, "cycle", st.Cycles, "why", dec.Why)
	for _, a := range dec.Actions {
		logger.Warn("beads changed", "session", in.SessionID, "epic", epic, "action", a)
	}
	return dec, nil
}
