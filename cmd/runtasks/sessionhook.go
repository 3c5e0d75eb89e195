package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
)

func newSessionHookCmd(f *Factory) *cobra.Command {
	return hookCmd(f, runSessionHook, &cobra.Command{
		Use:   "session-hook",
		Short: "Give a bound session its epic's state at start, resume, clear and compact (SessionStart hook)",
		Long: `session-hook reads the agent's SessionStart hook input on stdin (startup,
resume, clear, compact), and project.yaml only when trusted (runtasks trust).

For a session armed for an epic (/run-tasks, runtasks arm) it answers the
orchestration prompt and the epic's state (ready, in progress and blocked
work, the cycle count; for a task: its status and prompt) as
additionalContext, so that a session resumed or compacted picks up where the
last one stopped; claimed tasks and their run folders are listed too. Any
other session: nothing is printed and bd is not asked.`,
		Example: `  # .claude/settings.json
  {"hooks":{"SessionStart":[{"matcher":"startup|resume|clear|compact","hooks":[{"type":"command","command":"runtasks session-hook"}]}]}}`,
	})
}

var sessionHook = hookSpec{name: "session-hook", event: hook.EventSessionStart, unread: "the session's state was not given",
	unjudged: "the session's state was not given", needsSession: true}

// runSessionHook gives a bound session its work; any other session gets
// nothing, bd not asked.
func runSessionHook(ctx context.Context, o *hookOptions) error {
	return runHook(ctx, o, sessionHook, func(ctx context.Context) {
		cfg, session := o.cfg, o.session()
		if envFile := o.Getenv("CLAUDE_ENV_FILE"); envFile != "" {
			// Claude Code sources it into later Bash calls: the agent's
			// runtasks claim knows its session, and its bd acts as the
			// session's actor (so it may close the tasks it claimed).
			if err := appendSessionEnv(envFile, session, claim.Actor(cfg.Claim.Actor, o.Getenv, session)); err != nil {
				o.log.Warn("CLAUDE_ENV_FILE", "err", err)
			}
		}
		store := &state.Store{Dir: cfg.StateDir(), Warn: func(msg string) { o.log.Warn(msg) }}
		b, err := store.Binding(session)
		if err != nil {
			o.log.Error("session binding", "err", err)
		}
		if err != nil || b.Empty() {
			o.answer("")
			return
		}
		o.answer(claim.SessionText(ctx, cfg, newBeadsClient(o.Factory, cfg), store, b, o.payload.Source))
		o.log.Info("session hook", "session", session, "epic", b.Epic, "source", o.payload.Source)
	})
}

// appendSessionEnv exports RUNTASKS_SESSION and BEADS_ACTOR in the agent's
// session environment file.
func appendSessionEnv(path, session, actor string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	_, err = fmt.Fprintf(f, "export RUNTASKS_SESSION=%s\nexport BEADS_ACTOR=%s\n", quote(session), quote(actor))
	return errors.Join(err, f.Close())
}
