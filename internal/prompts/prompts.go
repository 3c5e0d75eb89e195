// Package prompts holds runtasks' embedded prompt templates and renders them.
package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// files are the skills and the run-folder templates (run/).
//
//go:embed skills run
var files embed.FS

// runTasks is the embedded orchestration prompt template.
//
//go:embed run-tasks.md
var runTasks string

//go:embed run-task.md
var runTask string

// RunTask is the prompt of a session driven for one task, not an epic.
func RunTask(task string) string {
	return strings.TrimRight(strings.ReplaceAll(runTask, "{task_id}", task), "\n")
}

// Read returns an embedded file (for example "skills/completion-checklist/SKILL.md").
func Read(name string) (string, error) {
	b, err := files.ReadFile(name)
	return string(b), err
}

// Data fills a prompt template: {epic_id}, or Go template fields.
type Data struct {
	Epic      string
	Session   string
	MaxCycles int
}

// Load returns the orchestration prompt template: path's, else the embedded one.
func Load(path string) (string, error) {
	if path == "" {
		return runTasks, nil
	}
	b, err := agentfile.Read(path, agentfile.MaxText)
	if err != nil {
		return "", fmt.Errorf("prompt template: %w", err)
	}
	return string(b), nil
}

// Render fills tmpl with d. A template without Go template actions only
// has {epic_id} replaced: parsing it, at every stop, would cost more than
// the rest of the prompt's work. In one with actions, {epic_id} is {{.Epic}}.
func Render(tmpl string, d Data) (string, error) {
	if !strings.Contains(tmpl, "{{") {
		return strings.TrimRight(strings.ReplaceAll(tmpl, "{epic_id}", d.Epic), "\n"), nil
	}
	t, err := template.New("prompt").Option("missingkey=error").Parse(strings.ReplaceAll(tmpl, "{epic_id}", "{{.Epic}}"))
	var buf bytes.Buffer
	if err == nil {
		err = t.Execute(&buf, d)
	}
	if err != nil {
		return "", fmt.Errorf("prompt template: %w", err)
	}
	return strings.TrimRight(buf.String(), "\n"), nil
}
