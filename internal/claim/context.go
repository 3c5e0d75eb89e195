package claim

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/prompts"
)

// Rel shows path relative to root when it lies inside it.
func Rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func levelLine(l *Level) string {
	if l == nil {
		return "none"
	}
	return fmt.Sprintf("%s %q", l.ID, l.Title)
}

// Text is the context injected after a claim: a summary line, the run
// folder's files, the task's description and acceptance criteria.
func (r Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task claimed: %s %q | Plan: %s | Goal: %s | Run: %s\n",
		r.Task.ID, r.Task.Title, levelLine(r.Plan()), levelLine(r.Goal()), Rel(r.Root, r.RunDir))
	if r.Again {
		b.WriteString("(this session had already claimed it: same run folder)\n")
	}
	fmt.Fprintf(&b, "Claimed in beads as %s (status in_progress).\n", r.Actor)
	b.WriteString("Run folder files:\n")
	for i, f := range r.Files { // in the order of prompts.RunFiles
		role := ""
		if i < len(prompts.RunFiles) {
			role = prompts.RunFiles[i].Role
		}
		fmt.Fprintf(&b, "- %s: %s\n", Rel(r.Root, f), role)
	}
	if d := strings.TrimSpace(r.Task.Description); d != "" {
		fmt.Fprintf(&b, "Task description:\n%s\n", d)
	}
	if items := Checklist(r.Task.AcceptanceCriteria); len(items) > 0 {
		b.WriteString("Acceptance criteria:\n")
		for _, it := range items {
			fmt.Fprintf(&b, "- [ ] %s\n", it)
		}
	}
	b.WriteString("Read THOUGHTS.md for the goal and the plan. Keep DECISIONS, ASSUMPTIONS and LEARNINGS as you go; write RESULTS.md before you stop.")
	return b.String()
}

// FailureText is the context injected when a claim did not happen, and why.
func FailureText(id string, err error) string {
	switch {
	case errors.Is(err, ErrEpic):
		return fmt.Sprintf("runtasks: nothing claimed: %v.", err)
	case errors.As(err, new(*HeldError)):
		return fmt.Sprintf("runtasks: task not claimed: %v. Nothing was changed; pick another task or ask its holder.", err)
	case errors.Is(err, ErrUnknown):
		return fmt.Sprintf("runtasks: task not claimed: beads has no issue %s. Nothing was created.", id)
	case errors.Is(err, ErrClosed):
		return fmt.Sprintf("runtasks: task not claimed: %s is closed.", id)
	}
	return fmt.Sprintf("runtasks: claiming %s failed: %v", id, err)
}

// ArmText is the context injected when a session is armed for an epic or
// a task; state is StateLine, or the task's status.
func ArmText(is beads.Issue, state, prompt string) string {
	var b strings.Builder
	if is.IssueType == beads.TypeEpic {
		fmt.Fprintf(&b, "runtasks: this session now drives epic %s %q. ", is.ID, is.Title)
		b.WriteString("Its Stop hook blocks while beads shows ready or in-progress work under the epic; ")
	} else {
		fmt.Fprintf(&b, "runtasks: this session now drives task %s %q. ", is.ID, is.Title)
		fmt.Fprintf(&b, "Its Stop hook blocks until beads shows %s itself closed; other tasks closing do not end it; ", is.ID)
	}
	b.WriteString("a <promise> ends the loop only when beads agrees.\n")
	b.WriteString(state)
	if prompt != "" {
		b.WriteString("\n\n" + prompt)
	}
	return b.String()
}

// StateLine summarises ready work: the count and up to three ids.
func StateLine(ready []beads.Issue) string {
	if len(ready) == 0 {
		return "Ready now: none."
	}
	var ids []string
	for _, is := range ready[:min(3, len(ready))] {
		ids = append(ids, fmt.Sprintf("%s %q", is.ID, is.Title))
	}
	return fmt.Sprintf("Ready now: %d (next: %s).", len(ready), strings.Join(ids, ", "))
}
