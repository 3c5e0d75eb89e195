package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/prompts"
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
	return runHook(ctx, o, sessionHook, func(ctx context.Context, h *hookCall) {
		cfg, session := h.cfg, h.session()
		if envFile := o.Getenv("CLAUDE_ENV_FILE"); envFile != "" {
			// Claude Code sources it into later Bash calls: the agent's
			// runtasks claim knows its session, and its bd acts as the
			// session's actor (so it may close the tasks it claimed).
			if err := appendSessionEnv(envFile, session, claim.Actor(cfg.Claim.Actor, o.Getenv, session)); err != nil {
				h.log.Warn("CLAUDE_ENV_FILE", "err", err)
			}
		}
		store := &state.Store{Dir: cfg.StateDir(), Warn: func(msg string) { h.log.Warn(msg) }}
		b, err := store.Binding(session)
		if err != nil {
			h.log.Error("session binding", "err", err)
		}
		if err != nil || b.Empty() {
			h.answer("")
			return
		}
		h.answer(sessionContext(ctx, cfg, newBeadsClient(o.Factory, cfg), store, b, h.payload.Source))
		h.log.Info("session hook", "session", session, "epic", b.Epic, "source", h.payload.Source)
	})
}

// sessionContext describes a bound session's work: the epic's state, the
// prompt, the claimed tasks.
func sessionContext(ctx context.Context, cfg *config.Config, bd *beads.Client, store *state.Store, b state.Binding, source string) string {
	var sb strings.Builder
	if b.Epic != "" {
		kind, work, p := "epic", "", ""
		if is, err := bd.Show(ctx, b.Epic); err == nil && is.IssueType != beads.TypeEpic {
			kind, work, p = "task", "Status now: "+is.Status+"; the loop ends when it is closed.", prompts.RunTask(is.ID)
		} else {
			work, p = epicState(ctx, bd, b.Epic), orchestrationPrompt(cfg, b.Epic, b.Session)
		}
		fmt.Fprintf(&sb, "runtasks: this session drives %s %s", kind, b.Epic)
		if source != "" {
			fmt.Fprintf(&sb, " (session %s)", source)
		}
		sb.WriteString(". Continue where the last stop left off: check beads, do not redo closed work.\n")
		sb.WriteString(work)
		if st, err := store.Get(b.Session, b.Epic); err == nil && st.Cycles > 0 {
			fmt.Fprintf(&sb, "\nStop-hook cycles so far: %d/%d.", st.Cycles, cfg.Workflow.StopHook.MaxCycles)
		}
		if p != "" {
			sb.WriteString("\n\n" + p)
		}
	}
	if len(b.Claims) > 0 {
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString("runtasks: tasks this session claimed:")
		untouched := state.UntouchedResults(b.Claims)
		for _, c := range b.Claims {
			note := "RESULTS.md written"
			if err := state.ResultsProblem(c); err != nil {
				note = "RESULTS.md not read: " + err.Error() + "; write it as a regular file"
			} else if slices.ContainsFunc(untouched, func(u state.ClaimedRun) bool { return u.Task == c.Task }) {
				note = "RESULTS.md not written yet"
			}
			fmt.Fprintf(&sb, "\n- %s: run folder %s (%s)", c.Task, claim.Rel(cfg.Root, c.RunDir), note)
		}
	}
	return sb.String()
}

// epicState summarises the epic's ready work and unclosed subtree (two bd
// queries); a bd failure is said, never taken for "no work".
func epicState(ctx context.Context, bd *beads.Client, epic string) string {
	ready, err := bd.Ready(ctx, epic)
	if err != nil {
		return "Epic state unknown: " + err.Error()
	}
	line := claim.StateLine(ready)
	sub, err := bd.Subtree(ctx, epic)
	if err != nil {
		return line + " Rest of the epic unknown: " + err.Error()
	}
	var inProgress, blocked []string
	for _, is := range sub {
		switch {
		case is.Status == beads.StatusInProgress:
			inProgress = append(inProgress, fmt.Sprintf("%s %q (%s)", is.ID, is.Title, is.Assignee))
		case is.Blocked():
			blocked = append(blocked, is.ID)
		}
	}
	line += fmt.Sprintf(" In progress: %d", len(inProgress))
	if len(inProgress) > 0 {
		line += " (" + strings.Join(inProgress[:min(3, len(inProgress))], ", ") + ")"
	}
	line += fmt.Sprintf(". Blocked: %d. Unclosed in all: %d.", len(blocked), len(sub))
	return line
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
