package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
)

func newPreToolHookCmd(f *Factory) *cobra.Command {
	cmd := hookCmd(f, runPreToolHook, &cobra.Command{
		Use:   "pre-tool-hook",
		Short: "Run a task's checks before the agent closes it (run by the agent's pre-tool hook)",
		Long: `pre-tool-hook reads a shell tool call (Claude Code and Codex PreToolUse,
Gemini CLI BeforeTool) on stdin. When the command would close tasks of the
session's epic (bd close X, bd update X --status closed), it runs each
task's workflow.verify checks first: a failure denies the call with the
check's name and the end of its output; a pass allows it and is recorded in
the decision log. Any other call is allowed at once, without asking bd.

Sessions runtasks does not drive, tasks outside the epic and projects
without workflow.verify are never gated. A runtasks run worker's agent
(RUNTASKS_TASK set) is gated on its own task, at its close and at its git
merge of the task's branch; its checks run in its worktree. The agents fail open: a hook that
crashes or times out lets the command run, and the stop audit checks it.`,
		Example: `  # .claude/settings.json
  {"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"runtasks pre-tool-hook","timeout":600}]}]}}

  # try it by hand
  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"bd close bd-x7y8.1"}}' | runtasks pre-tool-hook --epic bd-x7y8`,
	})
	cmd.Flags().String("epic", "", "epic whose tasks are gated (env RUNTASKS_EPIC, workflow.epic)")
	return cmd
}

var preToolHook = hookSpec{name: "pre-tool-hook", event: hook.EventPreTool, unread: "tool call allowed",
	unjudged: "the close was not verified (allowed; the stop audit will check it)", needsSession: true,
	pass: func(o *hookOptions, p hook.Payload) bool { return len(gated(o.Worker, p)) == 0 }}

// runPreToolHook allows every tool call but a close whose checks fail. A
// call that closes nothing is allowed before any configuration is read.
func runPreToolHook(ctx context.Context, o *hookOptions) error {
	return runHook(ctx, o, preToolHook, func(ctx context.Context) {
		if o.noStore != "" {
			return
		}
		in := engine.Input{Agent: o.agent, Event: hook.EventPreTool, SessionID: o.session()}
		store := &state.Store{Dir: o.cfg.StateDir(), Warn: func(msg string) { o.log.Warn(msg) }}
		deny, err := engine.Gate(ctx, store, o.cfg, engine.GateRequest{Input: in, EpicFromFlag: o.EpicFlag, Closes: gated(o.Worker, o.payload), Worker: o.Worker}, o.Ports(o.cfg))
		switch {
		case err != nil:
			o.log.Error("close not verified", "err", err)
			o.say("runtasks: could not verify the close (" + err.Error() + "); " + preToolHook.unjudged + ".")
		case deny != "":
			o.log.Info("close denied", "session", in.SessionID, "why", deny)
			o.reply(hook.EncodeDeny(o.agent, deny))
		case o.notice != "":
			o.say(o.notice)
		}
	})
}

// gated are the tasks a tool call would close: with bd, or, for a runtasks
// run worker, by merging its task's branch.
func gated(worker string, p hook.Payload) []string {
	line, _ := p.ToolInput.Command.(string)
	ids := beads.ClosedBy(line)
	if worker != "" && beads.MergesTask(line, worker) {
		ids = append(ids, worker)
	}
	return ids
}
