package claim

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/prompts"
	"github.com/runtasks/runtasks/internal/state"
)

// SessionText is a bound session's SessionStart context: its epic's state
// (or its task's status), the prompt, the claimed tasks.
func SessionText(ctx context.Context, cfg *config.Config, bd *beads.Client, store *state.Store, b state.Binding, source string) string {
	var sb strings.Builder
	if b.Epic != "" {
		kind, work, p := "epic", "", ""
		if is, err := bd.Show(ctx, b.Epic); err == nil && is.IssueType != beads.TypeEpic {
			kind, work, p = "task", "Status now: "+is.Status+"; the loop ends when it is closed.", prompts.RunTask(is.ID)
		} else {
			work = epicState(ctx, bd, b.Epic)
			p, _ = engine.RenderPrompt(cfg, b.Epic, b.Session) // "" when it cannot be rendered (the stop hook says why)
		}
		fmt.Fprintf(&sb, "runtasks: this session drives %s %s", kind, b.Epic)
		if source != "" {
			fmt.Fprintf(&sb, " (session %s)", source)
		}
		sb.WriteString(". Continue where the last stop left off: check beads, do not redo closed work.\n")
		sb.WriteString(work)
		if st, err := store.Get(b.Session, b.Epic); err == nil && st.Cycles > 0 {
			fmt.Fprintf(&sb, "\nStop-hook cycles so far: %d/%d.", st.Cycles, engine.MaxCycles(cfg, b.Epic))
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
			fmt.Fprintf(&sb, "\n- %s: run folder %s (%s)", c.Task, Rel(cfg.Root, c.RunDir), note)
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
	line := StateLine(ready)
	sub, err := bd.Subtree(ctx, epic)
	if err != nil {
		return line + " Rest of the epic unknown: " + err.Error()
	}
	var inProgress, blocked []string
	for _, is := range sub { // the stop's buckets; what is ready is counted above
		switch engine.Class(is, nil) {
		case "in_progress":
			inProgress = append(inProgress, fmt.Sprintf("%s %q (%s)", is.ID, is.Title, is.Assignee))
		case "blocked":
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
