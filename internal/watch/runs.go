package watch

import (
	"fmt"
	"slices"
	"time"

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

// runLine is a run's line in the view.
func runLine(r headless.RunState, now time.Time, width int) string {
	mark, state := " ", "running "+ago(now.Sub(r.StartedAt))
	if r.Status == headless.StatusDead {
		mark, state = styleAlert.Render("!"), styleAlert.Render("dead")+": its runtasks process is gone"
	}
	return fmt.Sprintf("%s run %s %s %s  %s  %s %s", mark, middle(r.RunID, idWidth(width)+8), cut(r.Epic, 10), bar(r.Closed, r.Total, 10), cycles(r.Cycle, r.MaxCycles), cut(r.Agent, 8), state)
}
