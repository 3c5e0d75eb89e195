package watch

import (
	"fmt"
	"time"

	"github.com/runtasks/runtasks/internal/headless"
)

// RunRow is a runtasks run whose record says it is running: live, or dead
// (its runtasks process is gone: killed, or the machine restarted).
type RunRow struct {
	ID, Epic, Agent string
	Dead            bool
	Cycles, Max     int
	Closed, Total   int
	Started         time.Time
}

// LiveRuns reads runtasks run's records under dir (headless.ListRuns) and
// keeps the running and dead ones, newest first; finished runs are left to
// runtasks status. A missing dir is no runs.
func LiveRuns(dir string) ([]RunRow, error) {
	if dir == "" {
		return nil, nil
	}
	runs, _, err := headless.ListRuns(dir)
	if err != nil {
		return nil, err
	}
	var out []RunRow
	for _, r := range runs {
		if r.Status != "running" && r.Status != headless.StatusDead {
			continue
		}
		out = append(out, RunRow{ID: r.RunID, Epic: r.Epic, Agent: r.Agent, Dead: r.Status == headless.StatusDead,
			Cycles: r.Cycle, Max: r.MaxCycles, Closed: r.Closed, Total: r.Total, Started: r.StartedAt})
	}
	return out, nil
}

// runLine is a run's line in the view.
func runLine(r RunRow, now time.Time) string {
	mark, state := " ", "running "+ago(now.Sub(r.Started))
	if r.Dead {
		mark, state = styleAlert.Render("!"), styleAlert.Render("dead")+": its runtasks process is gone"
	}
	return fmt.Sprintf("%s run %s %s %s  %s  %s %s", mark, cut(r.ID, 20), cut(r.Epic, 10), bar(r.Closed, r.Total, 10), cycles(r.Cycles, r.Max), cut(r.Agent, 8), state)
}
