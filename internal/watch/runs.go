package watch

import (
	"fmt"
	"time"

	"github.com/runtasks/runtasks/internal/headless"
)

// LiveRuns reads runtasks run's records under dir (headless.ListRuns) and
// keeps the running and dead ones (its runtasks process is gone: killed,
// or the machine restarted), newest first; finished runs are left to
// runtasks status. A missing dir is no runs.
func LiveRuns(dir string) ([]headless.RunState, error) {
	if dir == "" {
		return nil, nil
	}
	runs, _, err := headless.ListRuns(dir)
	var out []headless.RunState
	for _, r := range runs {
		if r.Status == "running" || r.Status == headless.StatusDead {
			out = append(out, r)
		}
	}
	return out, err
}

// runLine is a run's line in the view.
func runLine(r headless.RunState, now time.Time) string {
	mark, state := " ", "running "+ago(now.Sub(r.StartedAt))
	if r.Status == headless.StatusDead {
		mark, state = styleAlert.Render("!"), styleAlert.Render("dead")+": its runtasks process is gone"
	}
	return fmt.Sprintf("%s run %s %s %s  %s  %s %s", mark, cut(r.RunID, 20), cut(r.Epic, 10), bar(r.Closed, r.Total, 10), cycles(r.Cycle, r.MaxCycles), cut(r.Agent, 8), state)
}
