package main

import (
	"context"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/notify"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

type stopHookOptions struct {
	hookOptions
	// Ports builds the engine's ports (bd, git, shell) for a config.
	Ports func(cfg *config.Config) engine.Ports
	// EpicFlag is true when --epic was given: it wins over a session binding.
	EpicFlag bool
	// Notify hands the decision's event to workflow.notify (detached);
	// it returns the event dispatched ("" for none). nil: no notify.
	Notify func(cfg *config.Config, src *config.Sources, in engine.Input, dec engine.Decision) (string, error)
}

func newStopHookCmd(f *Factory) *cobra.Command {
	opts := &stopHookOptions{}
	cmd := &cobra.Command{
		Use:   "stop-hook",
		Short: "Decide whether the agent may stop (run by the agent's Stop hook)",
		Long: `stop-hook reads the agent's Stop hook input on stdin and answers on stdout.
It reads the project's project.yaml only when trusted (runtasks trust).

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
			opts.wire(f, cmd)
			explicit, _ := cmd.Flags().GetString("config")
			opts.Notify = func(cfg *config.Config, src *config.Sources, in engine.Input, dec engine.Decision) (string, error) {
				return notify.Send(cfg, src, notify.FromTrustedSource(explicit, hookFileTrusted(cfg)), in, dec, f.Now(),
					selfPath, []string{notifyRunCommand}, f.Environ())
			}
			opts.Ports = func(cfg *config.Config) engine.Ports { return stopPorts(f, cfg) }
			// The decision log keeps a configuration error, so that status
			// shows why runtasks is off.
			opts.ConfigError = func(h *hookCall, dir string, dec engine.Decision) {
				in, _ := hook.Input(h.agent, h.payload, false)
				recordConfigError(f, dir, in, dec)
			}
			opts.EpicFlag = cmd.Flags().Changed("epic")
			return runStopHook(cmd.Context(), opts)
		},
	}
	cmd.Flags().String("epic", "", "epic whose beads drive the session (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().Int("max-cycles", 0, "blocks before the stop is allowed anyway (workflow.stop_hook.max_cycles)")
	cmd.Flags().Bool("taskmaster", false, "require the TASKMASTER_DONE::<session_id> line (workflow.done_token.required)")
	opts.addFlags(cmd)
	return cmd
}

var stopHook = hookSpec{name: "stop-hook", event: hook.EventStop, unread: "stop allowed", unjudged: "this stop was not judged (allowed)"}

// runStopHook asks the engine whether the agent may stop; every problem
// allows the stop (runHook).
func runStopHook(ctx context.Context, o *stopHookOptions) error {
	return runHook(ctx, &o.hookOptions, stopHook, func(ctx context.Context, h *hookCall) {
		cfg, logger := h.cfg, h.log
		in, err := hook.Input(h.agent, h.payload, cfg.Workflow.DoneToken.Required)
		if err != nil {
			logger.Warn("could not read the final message; judging without it", "err", err)
		}
		store := &state.Store{Dir: cfg.StateDir(), Warn: func(msg string) { logger.Warn(msg) }}
		addSpending(&in, cfg, store, logger)
		ports := o.Ports(cfg)
		ports.Usage = func(from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
			return hook.Usage(h.agent, h.payload, from)
		}
		dec, err := engine.Stop(ctx, store, cfg, engine.StopRequest{Input: in, EpicFromFlag: o.EpicFlag}, ports)
		if err != nil {
			logger.Error("stop allowed", "err", err)
		}
		logDecision(logger, in.SessionID, dec)
		dec.SystemMessage = joinMessages(h.notice, dec.SystemMessage)
		if out := hook.EncodeStop(h.agent, dec); out != nil {
			h.out.Write(out)
		}
		// After the answer: notify never delays or changes the stop.
		if o.Notify != nil {
			if event, err := o.Notify(cfg, h.src, in, dec); err != nil {
				logger.Warn("notify", "session", in.SessionID, "epic", dec.Epic, "outcome", dec.Outcome, "err", err)
			} else if event != "" {
				logger.Info("notify dispatched", "session", in.SessionID, "epic", dec.Epic, "event", event)
			}
		}
	})
}

// addSpending fills, when an epic budget is set, what the other
// sessions' loops spent. A failure is logged: the budget then counts this
// session only. (The stop's own usage is read by Stop, through
// Ports.Usage, for a driven session only.)
func addSpending(in *engine.Input, cfg *config.Config, store *state.Store, logger *log.Logger) {
	if b := cfg.Workflow.Budget; b.EpicTokens > 0 || b.EpicCost > 0 {
		var err error
		if in.OthersSpent, err = store.SpentByEpic(in.SessionID); err != nil {
			logger.Warn("could not sum the epic's spending; its budget counts this session only", "err", err)
		}
	}
}

// logDecision logs one decision of the engine.
func logDecision(logger *log.Logger, session string, dec engine.Decision) {
	lvl := log.InfoLevel
	switch {
	case dec.Outcome == state.OutcomeNotDriven:
		lvl = log.DebugLevel
	case dec.Outcome.Class() == state.ClassError:
		lvl = log.WarnLevel
	}
	logger.Log(lvl, "decision", "session", session, "epic", dec.Epic, "outcome", dec.Outcome, "block", dec.Block, "cycle", dec.Cycle, "why", dec.Why)
	for _, a := range dec.Actions {
		logger.Warn("beads changed", "session", session, "epic", dec.Epic, "action", a)
	}
}
