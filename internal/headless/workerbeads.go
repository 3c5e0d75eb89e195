package headless

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/beads"
)

// moments answers a worker's queries, the engine's and the tally, from one
// beads.Moment per cycle (the whole store in two bd calls; the claim is the
// third), read by refresh and dropped (m nil) after a write. Without a
// moment every query goes to bd. Only its worker's goroutine uses it.
type moments struct {
	WorkerBeads
	epic    string
	m       *beads.Moment
	omitted []beads.Issue // the tasks Ready added to bd's ready list
}

func (v *moments) refresh(ctx context.Context) error {
	r, ok := v.WorkerBeads.(interface {
		Moment(context.Context) (beads.Moment, error)
	})
	if !ok {
		return nil
	}
	m, err := r.Moment(ctx)
	if ready, ok := m.ReadyUnder(v.epic); err == nil && ok {
		if _, straddled := unready(m.Subtree(v.epic), ready); len(straddled) > 0 {
			m, err = r.Moment(ctx) // read again
		}
	}
	v.m = nil
	if err == nil {
		v.m = &m
	}
	return err
}

// Ready is bd's ready list, and the tasks it omits though their blockers
// are closed: the engine and the claim count them alike.
func (v *moments) Ready(ctx context.Context, epic string) ([]beads.Issue, error) {
	v.omitted = nil
	if m := v.m; m != nil {
		if in, ok := m.ReadyUnder(epic); ok {
			v.omitted, _ = unready(m.Subtree(epic), in)
			return append(in, v.omitted...), nil
		}
	}
	return v.WorkerBeads.Ready(ctx, epic)
}

// Descendants answers the engine's stop audit: the epic and its subtree,
// closed tasks too.
func (v *moments) Descendants(ctx context.Context, epic string) (beads.Issue, []beads.Issue, error) {
	if m := v.m; m != nil {
		return m.Descendants(epic)
	}
	return v.WorkerBeads.Descendants(ctx, epic)
}

func (v *moments) Subtree(ctx context.Context, epic string) ([]beads.Issue, error) {
	if m := v.m; m != nil {
		return m.Subtree(epic), nil
	}
	return v.WorkerBeads.Subtree(ctx, epic)
}

func (v *moments) Show(ctx context.Context, id string) (beads.Issue, error) {
	if m := v.m; m != nil {
		if i := slices.IndexFunc(m.All, func(is beads.Issue) bool { return is.ID == id }); i >= 0 {
			return m.All[i], nil
		}
	}
	return v.WorkerBeads.Show(ctx, id)
}

func (v *moments) Tally(ctx context.Context, epic string) (beads.Tally, error) {
	if m := v.m; m != nil {
		return m.Tally(epic)
	}
	return v.WorkerBeads.Tally(ctx, epic)
}

// notTheTasks reports whether an agent run failed for a reason no task
// causes: the agent could not start, or could not authenticate. Such a
// failure ends the workers; any other is the task's.
func notTheTasks(err error) bool {
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) || errors.As(err, &pe) {
		return true
	}
	s := strings.ToLower(err.Error())
	return slices.ContainsFunc([]string{"authenticat", "api key", "unauthorized", "oauth token", "/login", "not logged in"},
		func(w string) bool { return strings.Contains(s, w) })
}

// transient reports whether a bd failure may pass: a timeout, no slot, the
// server away, or a write that lost to another client's (Dolt's
// serialization failure, which writes nothing).
func transient(err error) bool {
	return beads.IsKind(err, beads.KindTimeout) || beads.IsKind(err, beads.KindBusy) || beads.IsKind(err, beads.KindUnavailable) ||
		strings.Contains(err.Error(), "serialization failure")
}

// failedMark is in the note of each failed agent run of a task: the notes
// count a task's failures, across workers and machines.
const failedMark = "the agent failed: "

// unready are the open tasks of sub with no open blocker that bd's ready
// list lacks. With blocking dependencies (all closed), bd v1.3.0 can leave
// such a task marked blocked: omitted, it counts ready. Without, it changed
// between the moment's two reads (given back after bd ready): straddled;
// counted as it stands it would look blocked, and the loop could end
// needing a person while work is ready.
func unready(sub, ready []beads.Issue) (omitted, straddled []beads.Issue) {
	for _, is := range sub {
		if is.Status != beads.StatusOpen || is.IssueType == beads.TypeEpic || len(is.BlockedBy) > 0 ||
			slices.ContainsFunc(ready, func(r beads.Issue) bool { return r.ID == is.ID }) {
			continue
		}
		if slices.ContainsFunc(is.Dependencies, func(d beads.Dependency) bool { return d.Type == beads.DepBlocks }) {
			omitted = append(omitted, is)
		} else {
			straddled = append(straddled, is)
		}
	}
	return omitted, straddled
}

// errOmitted: a task counted ready that bd will not hand out.
var errOmitted = errors.New("a task bd will not hand out")
