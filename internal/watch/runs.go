package watch

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/headless"
)

// LiveRuns reads runtasks run's records under dir and keeps the running
// and dead (process gone) ones, newest first. A missing dir is no runs.
func LiveRuns(dir string) ([]headless.RunState, error) {
	if dir == "" {
		return nil, nil
	}
	runs, _, err := headless.ListRuns(dir)
	return slices.DeleteFunc(runs, func(r headless.RunState) bool { return r.Status != "running" && r.Status != headless.StatusDead }), err
}

func runLine(r headless.RunState, now time.Time, width int) string {
	mark, state := " ", "running "+ago(now.Sub(r.StartedAt))
	if r.Status == headless.StatusDead {
		mark, state = styleAlert.Render("!"), styleAlert.Render("dead")+": its runtasks process is gone"
	}
	return fmt.Sprintf("%s run %s %s %s  %s  %s %s", mark, middle(r.RunID, idWidth(width)+8), cut(r.Epic, 10), bar(r.Closed, r.Total, 10), cycles(r.Cycle, r.MaxCycles), cut(r.Agent, 8), state)
}

// GivenPrompts sets the reason of each runtasks run session (run-ID) to the
// prompt its agent was last given (headless.PromptFile): a worker's is its
// task, never the engine's reason.
func GivenPrompts(snap *Snapshot, runsDir string) {
	for i, r := range snap.Rows {
		if id, ok := strings.CutPrefix(r.Session, "run-"); ok && runsDir != "" {
			if b, err := agentfile.Read(filepath.Join(runsDir, id, headless.PromptFile), agentfile.MaxText); err == nil {
				snap.Rows[i].LastReason, snap.Rows[i].Given = string(b), true
			}
		}
	}
}
