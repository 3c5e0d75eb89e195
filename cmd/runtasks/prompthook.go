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
	"github.com/runtasks/runtasks/internal/state"
)

// hookBeads is what the prompt and session hooks ask of beads.
type hookBeads interface {
	claim.Tracker
	Ready(ctx context.Context, epic string) ([]beads.Issue, error)
	Subtree(ctx context.Context, epic string) ([]beads.Issue, error)
}

// promptHookOptions are the prompt and session hooks' options.
type promptHookOptions struct {
	hookOptions
	Beads  func(cfg *config.Config) hookBeads
	Getenv func(string) string
	Now    func() time.Time
}

func newPromptHookCmd(f *Factory) *cobra.Command {
	opts := &promptHookOptions{}
	cmd := &cobra.Command{
		Use:   "prompt-hook",
		Short: "Claim tasks and arm sessions from the user's prompt (UserPromptSubmit hook)",
		Long: `prompt-hook reads the agent's UserPromptSubmit hook input on stdin.
It reads the project's project.yaml only when trusted (runtasks trust).

Only a prompt that starts with a request counts; a sentence that
mentions, quotes or negates one ("Do NOT run tasks for bd-x7y8") asks for
nothing. A configured pattern counts only where it matches at the prompt's
start.

A prompt that starts with the skill and an epic id — "/run-tasks bd-x7y8",
or "/runtasks:run-tasks bd-x7y8" as Claude Code names the plugin's skill
(claim.arm_patterns) — arms the session: its Stop hook then drives that
epic without a static --epic, and other sessions stay untouched. An id
beads does not know, or a closed issue, arms nothing.

A prompt that starts by claiming a task — "claim <id>", "select <id>",
"start <id>", "work on <id>", "pick up <id>", "/claim <id>"
(claim.patterns) — claims it as runtasks claim does, for the hook's
session, and answers the task's context (additionalContext): "Task
claimed: <id> | Plan: … | Goal: … | Run: …" and the run folder's files. An
epic is never claimed: the answer says "<id> is an epic: /run-tasks <id>
drives it".

Any other prompt passes through: nothing is printed and bd is not asked.
stdout carries only the agent's JSON. Exit status is always 0: a hook never
fails the agent.`,
		Example: `  # .claude/settings.json
  {"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"runtasks prompt-hook","timeout":30}]}]}}

  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"UserPromptSubmit","prompt":"claim bd-x7y8.3"}' | runtasks prompt-hook`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.wire(f, cmd)
			return runPromptHook(cmd.Context(), opts)
		},
	}
	opts.addFlags(cmd)
	return cmd
}

func (o *promptHookOptions) wire(f *Factory, cmd *cobra.Command) {
	o.hookOptions.wire(f, cmd)
	o.Beads = func(cfg *config.Config) hookBeads { return newBeadsClient(f, cfg) }
	o.Getenv, o.Now = f.Getenv, f.Now
}

var promptHook = hookSpec{name: "prompt-hook", event: hook.EventPromptSubmit, unread: "the prompt was passed through", unjudged: "the prompt was passed through"}

// runPromptHook claims a task or arms the session when the prompt starts
// with such a request; any other prompt passes through, bd not asked.
func runPromptHook(ctx context.Context, o *promptHookOptions) error {
	return runHook(ctx, &o.hookOptions, promptHook, func(ctx context.Context, h *hookCall) {
		cfg := h.cfg
		m, err := claim.NewMatcher(cfg.Claim)
		if err != nil {
			h.log.Error("prompt passed through", "err", err)
			return
		}
		intent, ok := m.Match(h.payload.Prompt)
		if !ok {
			return
		}
		session := h.session()
		var text string
		switch {
		case session == "":
			text = fmt.Sprintf("runtasks: the hook input has no session id, so %s was not %sed.", intent.ID, intent.Kind)
		case h.noStore != "":
			text = fmt.Sprintf("runtasks: no beads store was found, so %s was not %sed: %s. Start the agent in the project that holds .beads, or set BEADS_DIR (beads.dir).", intent.ID, intent.Kind, h.noStore)
		case intent.Kind == claim.KindArm:
			text = armSession(ctx, cfg, o.Beads(cfg), session, intent.ID, o.Now())
		default:
			res, err := claim.Claim(ctx, o.Beads(cfg), claimRequest(cfg, intent.ID, session, "", o.Getenv, o.Now()))
			if err != nil {
				text = claim.FailureText(intent.ID, err)
			} else {
				text = res.Text()
			}
		}
		h.log.Info("prompt hook", "session", session, "intent", intent.Kind, "id", intent.ID)
		h.answer(text)
	})
}

// armSession binds session to epic after checking that beads knows the
// epic, and returns the context to inject.
func armSession(ctx context.Context, cfg *config.Config, bd hookBeads, session, epic string, now time.Time) string {
	is, _, err := claim.Arm(ctx, bd, &state.Store{Dir: cfg.StateDir()}, session, epic, now)
	if err != nil {
		return claim.ArmFailureText(epic, err)
	}
	state := "Ready now: unknown (bd failed: %v)."
	if ready, err := bd.Ready(ctx, epic); err != nil {
		state = fmt.Sprintf(state, err)
	} else {
		state = claim.StateLine(ready)
	}
	return claim.ArmText(is, state, orchestrationPrompt(cfg, epic, session))
}

// orchestrationPrompt renders the orchestration prompt for epic ("" when
// its template is broken: the stop hook reports that).
func orchestrationPrompt(cfg *config.Config, epic, session string) string {
	p, err := engine.RenderPrompt(cfg, epic, session)
	if err != nil {
		return ""
	}
	return p
}
