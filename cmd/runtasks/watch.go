package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/status"
	"github.com/runtasks/runtasks/internal/watch"
)

// statusWatch is runtasks status --watch: the full-screen view on a
// terminal, else a new table each time a loop's state changes (a decision,
// a cycle, a run's status or tally), never for the time alone.
func statusWatch(ctx context.Context, o *statusOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.TTY {
		return statusWatchTTY(ctx, o)
	}
	changes := make(chan struct{}, 1)
	go watch.Follow(ctx, o.Store.Dir, func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}, o.RunsDir)
	for shown := ""; ; {
		rep, err := status.Collect(&o.Options)
		if err != nil {
			return err
		}
		if key := stateKey(rep); key != shown {
			if shown != "" {
				fmt.Fprintf(o.Out, "\n--- %s\n", o.Now().In(o.Loc).Format("15:04:05"))
			}
			if err := printStatus(ctx, o, rep); err != nil {
				return err
			}
			shown = key
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
		}
	}
}

// stateKey is what the plain watch compares: each loop's cycle and last
// decision, each run's status, cycle and tally; no time since.
func stateKey(rep *status.Report) string {
	var b strings.Builder
	for _, s := range rep.Sessions {
		fmt.Fprintf(&b, "%s %s %d %s|", s.Session, s.Epic, s.Cycle, s.Ended)
		if l := s.Last; l != nil {
			fmt.Fprintf(&b, "%s %s %t|", l.Time, l.Outcome, l.Block)
		}
	}
	for _, r := range rep.Runs {
		fmt.Fprintf(&b, "%s %s %d %d/%d|", r.RunID, r.Status, r.Cycle, r.Closed, r.Total)
	}
	for _, r := range rep.History {
		fmt.Fprintf(&b, "%s %s|", r.Time, r.Session)
	}
	return b.String()
}

func statusWatchTTY(ctx context.Context, o *statusOptions) error {
	progress := &watch.Progress{Tally: o.Tally} // no Tally: the decisions' bars
	m := watch.Model{
		Load: func() (watch.Snapshot, error) {
			snap, err := watch.Load(o.Store, o.RunsDir)
			progress.Apply(ctx, &snap, time.Now())
			return snap, err
		},
		History: func(session, epic string) []state.Record {
			recs, _ := o.Store.Records(state.RecordFilter{Session: session, Epic: epic, Limit: 10})
			return recs
		},
		Now: o.Now,
		Due: progress.Due, // a read due reloads (bd changed between stops)
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(o.In), tea.WithOutput(o.Out))
	go watch.Follow(ctx, o.Store.Dir, func() { p.Send(watch.Changed{}) }, o.RunsDir)
	progress.Updated = func() { p.Send(watch.Changed{}) } // a read redraws
	_, err := p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}
