package main

import (
	"context"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

func newStopHookCmd(f *Factory) *cobra.Command {
	cmd := hookCmd(f, runStopHook, &cobra.Command{
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
	})
	cmd.Flags().String("epic", "", "epic whose beads drive the session (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().Int("max-cycles", 0, "blocks before the stop is allowed anyway (workflow.stop_hook.max_cycles)")
	cmd.Flags().Bool("taskmaster", false, "require the TASKMASTER_DONE::<session_id> line (workflow.done_token.required)")
	return cmd
}

var stopHook = hookSpec{name: "stop-hook", event: hook.EventStop, unread: "stop allowed", unjudged: "this stop was not judged (allowed)"}

// runStopHook asks the engine whether the agent may stop; every problem
// allows it.
func runStopHook(ctx context.Context, o *hookOptions) error {
	return runHook(ctx, o, stopHook, func(ctx context.Context) {
		in, err := hook.Input(o.agent, o.payload, o.cfg.Workflow.DoneToken.Required)
		if err != nil {
			o.log.Warn("could not read the final message; judging without it", "err", err)
		}
		store := &state.Store{Dir: o.cfg.StateDir(), Warn: func(msg string) { o.log.Warn(msg) }}
		ports := o.Ports(o.cfg)
		ports.Usage = func(from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
			return hook.Usage(o.agent, o.payload, from)
		}
		// Notify goes after the answer: it never delays or changes the stop.
		var notifyAfter func()
		if o.Notify != nil {
			ports.Notify = func(in engine.Input, dec engine.Decision) { notifyAfter = func() { o.Notify(in, dec) } }
		}
		dec, err := engine.Stop(ctx, store, o.cfg, engine.StopRequest{Input: in, EpicFromFlag: o.EpicFlag}, ports)
		if err != nil {
			o.log.Error("stop allowed", "err", err)
		}
		lvl := log.InfoLevel
		switch {
		case dec.Outcome == state.OutcomeNotDriven:
			lvl = log.DebugLevel
		case dec.Outcome.Class() == state.ClassError:
			lvl = log.WarnLevel
		}
		o.log.Log(lvl, "decision", "session", in.SessionID, "epic", dec.Epic, "outcome", dec.Outcome, "block", dec.Block, "cycle", dec.Cycle, "why", dec.Why)
		for _, a := range dec.Actions {
			o.log.Warn("beads changed", "session", in.SessionID, "epic", dec.Epic, "action", a)
		}
		dec.SystemMessage = joinMessages(o.notice, dec.SystemMessage)
		o.reply(hook.EncodeStop(o.agent, dec))
		if notifyAfter != nil {
			notifyAfter()
		}
	})
}
