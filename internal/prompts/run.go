package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// RunFiles are the run-folder templates (Go text/templates), in the order written.
var RunFiles = []string{
	"THOUGHTS.md", "DECISIONS.md", "ASSUMPTIONS.md", "LEARNINGS.md", "RESULTS.md",
	"timeline.yaml", "metadata.yaml",
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
	b, err := files.ReadFile("run/" + name)
	if err != nil {
		return "", fmt.Errorf("run template %s: %w", name, err)
	}
	return string(b), nil
}
