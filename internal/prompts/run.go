package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// RunFiles are the run-folder templates (Go text/templates), in the order
// written, each with what it is for (said in the context injected after a claim).
var RunFiles = []struct{ Name, Role string }{
	{"THOUGHTS.md", "goal, plan and task context, acceptance checklist; your working notes"},
	{"DECISIONS.md", "each decision and why"},
	{"ASSUMPTIONS.md", "what you assumed without checking"},
	{"LEARNINGS.md", "what the next agent should know"},
	{"RESULTS.md", "what was done and how it was verified (required before you stop)"},
	{"timeline.yaml", "one entry per event"},
	{"metadata.yaml", "task, run id, session, claimed_at"},
}

// RunTemplate returns the run-folder template name: dir's when it has one,
// else the embedded one.
func RunTemplate(dir, name string) (string, error) {
	if dir != "" {
		b, err := agentfile.Read(filepath.Join(dir, name), agentfile.MaxText)
		if err == nil {
			return string(b), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("run template: %w", err)
		}
	}
	return Read("run/" + name) // every RunFiles name is embedded
}
