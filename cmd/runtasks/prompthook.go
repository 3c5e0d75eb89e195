package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/prompts"
	"github.com/runtasks/runtasks/internal/state"
)

func newPromptHookCmd(f *Factory) *cobra.Command {
	return hookCmd(f, runPromptHook, &cobra.Command{
		Use:   "prompt-hook",
		Short: "Claim tasks and arm sessions from the user's prompt (UserPromptSubmit hook)",
		Long: `prompt-hook reads the agent's UserPromptSubmit hook input on stdin, and the
project's project.yaml only when trusted (runtasks trust).

Only a prompt that starts with a request counts: one that mentions or quotes
it ("Do NOT run tasks for bd-x7y8"), or holds a negation, retraction or
question anywhere ("claim bd-x7y8.3 — actually no"), asks for nothing
(docs/claims.md).

"/run-tasks <id>" or "/runtasks:run-tasks <id>" (claim.arm_patterns) arms
the session: its Stop hook then drives that epic, or that task until it is
closed; an id beads does not know, or a closed issue, arms nothing.
"claim <id>", "work on <id>", "pick up <id>"… (claim.patterns) claims the
task as runtasks claim does and answers its context (additionalContext:
"Task claimed: <id> | Plan: … | Goal: … | Run: …"); an epic is never
claimed. Any other prompt passes through: nothing printed, bd not asked.`,
		Example: `  # .claude/settings.json
  {"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"runtasks prompt-hook","timeout":30}]}]}}

  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"UserPromptSubmit","prompt":"claim bd-x7y8.3"}' | runtasks prompt-hook`,
	})
}

var promptHook = hookSpec{name: "prompt-hook", event: hook.EventPromptSubmit, unread: "the prompt was passed through", unjudged: "the prompt was passed through"}

// runPromptHook claims a task or arms the session when the prompt starts
// with such a request.
func runPromptHook(ctx context.Context, o *hookOptions) error {
	return runHook(ctx, o, promptHook, func(ctx context.Context) {
		m, err := claim.NewMatcher(o.cfg.Claim)
		if err != nil {
			o.log.Error("prompt passed through", "err", err)
			return
		}
		intent, ok := m.Match(o.payload.Prompt)
		if !ok {
			return
		}
		session := o.session()
		var text string
		switch {
		case session == "":
			text = fmt.Sprintf("runtasks: the hook input has no session id, so %s was not %sed.", intent.ID, intent.Kind)
		case o.noStore != "":
			text = fmt.Sprintf("runtasks: no beads store was found, so %s was not %sed: %s. Start the agent in the project that holds .beads, or set BEADS_DIR (beads.dir).", intent.ID, intent.Kind, o.noStore)
		case intent.Kind == claim.KindArm:
			text = armSession(ctx, o.cfg, newBeadsClient(o.Factory, o.cfg), session, intent.ID, o.Now())
		default:
			res, err := claim.Claim(ctx, newBeadsClient(o.Factory, o.cfg), claimRequest(o.cfg, intent.ID, session, "", o.Getenv, o.Now()))
			if err != nil {
				text = claim.FailureText(intent.ID, err)
			} else {
				text = res.Text()
			}
		}
		o.log.Info("prompt hook", "session", session, "intent", intent.Kind, "id", intent.ID)
		o.answer(text)
	})
}

// armSession binds session to an epic or a task beads knows, and returns
// the context to inject.
func armSession(ctx context.Context, cfg *config.Config, bd *beads.Client, session, epic string, now time.Time) string {
	is, _, err := claim.Arm(ctx, bd, &state.Store{Dir: cfg.StateDir()}, session, epic, now)
	if err != nil {
		return claim.ArmFailureText(epic, err)
	}
	if is.IssueType != beads.TypeEpic {
		return claim.ArmText(is, "Status now: "+is.Status+".", prompts.RunTask(is.ID))
	}
	state := "Ready now: unknown (bd failed: %v)."
	if ready, err := bd.Ready(ctx, epic); err != nil {
		state = fmt.Sprintf(state, err)
	} else {
		state = claim.StateLine(ready)
	}
	prompt, _ := engine.RenderPrompt(cfg, epic, session) // "" when it cannot be rendered (the stop hook says why)
	return claim.ArmText(is, state, prompt)
}
