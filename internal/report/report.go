// Package report builds runtasks report: one self-contained HTML page of
// an epic's loop, from the decision log and runtasks run's records,
// rendered with html/template, which escapes everything read.
package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/status"
	"github.com/runtasks/runtasks/internal/usage"
)

// Input is what a report is built from: the epic's title and subtree as
// beads holds them, the records and runs of any epics and order (only
// Epic's are read), when it is made and the zone times are shown in.
type Input struct {
	Epic, Title string
	Tasks       []beads.Issue // the epic's descendants, closed ones included
	Records     []state.Record
	Runs        []headless.RunState
	Now         time.Time
	Loc         *time.Location
}

// Mark is what a cycle's tick on the timeline shows.
type Mark string

// Marks, in the order a tick shows the first that applies.
const (
	MarkComplete  Mark = "complete"  // the work is done (beads agreed)
	MarkEscalated Mark = "escalated" // a person is needed (escalation, no progress, budget)
	MarkRejected  Mark = "rejected"  // a completion promise or token was rejected
	MarkStuck     Mark = "stuck"     // stuck tasks were found or moved
	MarkClosed    Mark = "closed"    // tasks closed in beads are counted at this decision
	MarkError     Mark = "error"     // bd, a check, the configuration or runtasks failed
	MarkCycle     Mark = "cycle"     // nothing else: a plain cycle
)

// Cycle is one decision on the epic.
type Cycle struct {
	state.Record
	Seq    int         // 1-based, in time order over every session
	Closed int         // the tasks closed in beads counted at this decision (see Done)
	Stuck  []string    // the stuck-task actions
	Spent  usage.Spent // Usage's (zero when not recorded)
	Mark   Mark
}

// Done is a task beads holds closed, counted at the decision Seq of
// Session: the first decision of the session that held it (its assignee's
// run or session, else the session that claimed it) at or after its
// closed_at, else that session's last, else the epic's first decision after
// it, else the last.
type Done struct {
	beads.Issue
	Session string
	Seq     int
}

// Session is one session's cycles on the epic.
type Session struct {
	ID, Agent  string
	Start, End time.Time
	Cycles     []Cycle
	Last       state.Outcome
	Closed     int
	usage.Sum  // of the decisions whose usage was recorded
}

// Report is the model the page is rendered from.
type Report struct {
	Epic, Title           string
	Generated, Start, End time.Time
	Loc                   *time.Location
	// Complete: a decision found the epic done; CompletedAt is the first.
	Complete    bool
	CompletedAt time.Time
	Last        state.Outcome
	LastWhy     string
	// Total is how many descendants the epic has in beads, Done the closed.
	Total     int
	Done      []Done
	Titles    map[string]string // by id: the epic's and its tasks'
	Cycles    []Cycle
	Sessions  []Session
	Tasks     []usage.Row         // per claimed task, costliest first
	Runs      []headless.RunState // oldest first
	usage.Sum                     // of the decisions whose usage was recorded
	Counts    map[Mark]int
	// Verified is each task's last workflow.verify mark: verified,
	// unverified (a close denied) or reopened (by the stop audit).
	Verified map[string]string
}

func Build(in Input) Report {
	r := Report{Epic: in.Epic, Title: in.Title, Generated: in.Now, Loc: cmp.Or(in.Loc, time.Local), Total: len(in.Tasks),
		Titles: map[string]string{in.Epic: in.Title}, Counts: map[Mark]int{}, Verified: map[string]string{}}
	for _, rec := range in.Records {
		switch {
		case rec.Epic != in.Epic:
			continue
		case rec.Outcome == state.OutcomeVerified:
			r.Verified[rec.Task] = "verified"
		case rec.Outcome == state.OutcomeCloseDenied:
			r.Verified[rec.Task] = "unverified"
		}
		for _, a := range rec.Actions {
			if id, ok := strings.CutPrefix(a, "reopened "); ok {
				id, _, _ = strings.Cut(id, ":")
				r.Verified[id] = "reopened"
			}
		}
	}
	recs := slices.DeleteFunc(slices.Clone(in.Records), func(rec state.Record) bool {
		return rec.Epic != in.Epic || rec.Outcome.Class() == state.ClassIgnored
	})
	slices.SortStableFunc(recs, func(a, b state.Record) int { return a.Time.Compare(b.Time) })
	for i, rec := range recs {
		c := Cycle{Record: rec, Seq: i + 1}
		for _, a := range rec.Actions {
			if strings.Contains(a, " stuck (") {
				c.Stuck = append(c.Stuck, a)
			}
		}
		if rec.Usage != nil {
			c.Spent = *rec.Usage
		}
		r.Cycles = append(r.Cycles, c)
	}
	for _, is := range in.Tasks {
		r.Titles[is.ID] = is.Title
		if is.Status != beads.StatusClosed {
			continue
		}
		d := Done{Issue: is, Session: holder(is, recs, in.Runs)}
		if k := r.countedAt(d.Session, is.ClosedAt); k >= 0 {
			r.Cycles[k].Closed++
			d.Session, d.Seq = r.Cycles[k].Session, r.Cycles[k].Seq
		}
		r.Done = append(r.Done, d)
	}
	slices.SortStableFunc(r.Done, func(a, b Done) int { return a.ClosedAt.Compare(b.ClosedAt) })
	sessions := map[string]int{} // session id → index in r.Sessions
	for i := range r.Cycles {
		c := &r.Cycles[i]
		c.Mark = markOf(*c)
		r.Counts[c.Mark]++
		if c.Outcome.Done() && !r.Complete {
			r.Complete, r.CompletedAt = true, c.Time
		}
		k, ok := sessions[c.Session]
		if !ok {
			k = len(r.Sessions)
			sessions[c.Session] = k
			r.Sessions = append(r.Sessions, Session{ID: c.Session, Agent: c.Agent, Start: c.Time})
		}
		s := &r.Sessions[k]
		s.Cycles = append(s.Cycles, *c)
		s.End, s.Last = c.Time, c.Outcome
		s.Closed += c.Closed
		s.Agent = cmp.Or(s.Agent, c.Agent)
	}
	// The sums are status's: per (session, epic), the epic's, per task.
	spent, epics, tasks := status.Rollup(recs)
	for i, s := range r.Sessions {
		if sum := spent[[2]string{s.ID, in.Epic}]; sum != nil {
			r.Sessions[i].Sum = *sum
		}
	}
	if len(epics) > 0 { // recs are the epic's: one row
		r.Sum = epics[0].Sum
	}
	r.Tasks = tasks
	if n := len(r.Cycles); n > 0 {
		r.Start, r.End = r.Cycles[0].Time, r.Cycles[n-1].Time
		r.Last, r.LastWhy = r.Cycles[n-1].Outcome, r.Cycles[n-1].Why
	}
	// The tasks that cost most first.
	slices.SortStableFunc(r.Tasks, func(a, b usage.Row) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Total(), a.Total()))
	})
	r.Runs = slices.DeleteFunc(slices.Clone(in.Runs), func(run headless.RunState) bool { return run.Epic != in.Epic })
	slices.SortStableFunc(r.Runs, func(a, b headless.RunState) int { return a.StartedAt.Compare(b.StartedAt) })
	return r
}

// holder is the session that held a closed task: its assignee's run's
// (actor@RUN, runtasks run's workers) or session (actor@SESSION, a claim),
// else the first session whose decision counted it as claimed.
func holder(is beads.Issue, recs []state.Record, runs []headless.RunState) string {
	if i := strings.LastIndex(is.Assignee, "@"); i >= 0 {
		who := is.Assignee[i+1:]
		if k := slices.IndexFunc(runs, func(r headless.RunState) bool { return r.RunID == who }); k >= 0 {
			return runs[k].EngineSession
		}
		return who
	}
	if k := slices.IndexFunc(recs, func(rec state.Record) bool { return rec.Task == is.ID }); k >= 0 {
		return recs[k].Session
	}
	return ""
}

// countedAt is the index of the decision a task closed at t by session is
// counted at (see Done); -1 when there is none.
func (r Report) countedAt(session string, t time.Time) int {
	mine, own, after := 0, 0, 0 // 1 + an index; 0 for none
	for i, c := range r.Cycles {
		if !c.Time.Before(t) && after == 0 {
			after = i + 1
		}
		if c.Session == session {
			own = i + 1
			if !c.Time.Before(t) && mine == 0 {
				mine = i + 1
			}
		}
	}
	return cmp.Or(mine, own, after, len(r.Cycles)) - 1
}

func markOf(c Cycle) Mark {
	switch {
	case c.Outcome.Done():
		return MarkComplete
	case c.Outcome.Class() == state.ClassNeedsPerson:
		return MarkEscalated
	case c.Outcome == state.OutcomeRejected || c.Outcome == state.OutcomeTokenMissed:
		return MarkRejected
	case len(c.Stuck) > 0:
		return MarkStuck
	case c.Closed > 0:
		return MarkClosed
	case c.Outcome.Class() == state.ClassError:
		return MarkError
	}
	return MarkCycle
}

// Duration is the time from the first decision to completion, else the last.
func (r Report) Duration() time.Duration {
	if r.Complete {
		return r.CompletedAt.Sub(r.Start)
	}
	return r.End.Sub(r.Start)
}

// Summary is the plain-text summary at the top of the page.
func (r Report) Summary() string {
	var b strings.Builder
	b.WriteString("Epic " + r.Epic)
	if t := engine.OneLine(r.Title, 80); t != "" {
		b.WriteString(" (" + t + ")")
	}
	b.WriteString(": ")
	switch {
	case len(r.Cycles) == 0:
		b.WriteString("no decisions recorded.\n")
		return b.String()
	case r.Complete:
		fmt.Fprintf(&b, "complete in %s", FormatDuration(r.Duration()))
	default:
		fmt.Fprintf(&b, "not complete after %s; last: %s", FormatDuration(r.Duration()), r.Last)
	}
	fmt.Fprintf(&b, " (%s to %s).\n", r.Start.In(r.Loc).Format("2006-01-02 15:04"), r.End.In(r.Loc).Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "%d decision(s) in %d session(s)", len(r.Cycles), len(r.Sessions))
	if len(r.Runs) > 0 {
		fmt.Fprintf(&b, ", %d runtasks run(s)", len(r.Runs))
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "Tasks: %d of %d closed in beads.\n", len(r.Done), r.Total)
	tokens, n := "not recorded", len(r.Cycles)
	if r.Stops > 0 {
		tokens = usage.FormatTokens(r.Spent.Total()) + ", cost " + r.CostText(r.Spent)
		if r.Stops < n {
			tokens += fmt.Sprintf(" (%d of %d decisions not recorded)", n-r.Stops, n)
		}
	}
	fmt.Fprintf(&b, "Tokens: %s.\n", tokens)
	var marks []string
	for _, m := range []Mark{MarkRejected, MarkEscalated, MarkStuck, MarkError} {
		if n := r.Counts[m]; n > 0 {
			marks = append(marks, fmt.Sprintf("%d %s", n, m))
		}
	}
	if len(marks) > 0 {
		fmt.Fprintf(&b, "Marked: %s.\n", strings.Join(marks, ", "))
	}
	if len(r.Verified) > 0 {
		var marks []string
		for _, id := range slices.Sorted(maps.Keys(r.Verified)) {
			marks = append(marks, id+" "+r.Verified[id])
		}
		fmt.Fprintf(&b, "Verified close: %s.\n", strings.Join(marks, ", "))
	}
	if !r.Complete {
		fmt.Fprintf(&b, "Last reason: %s\n", engine.OneLine(r.LastWhy, 200))
	}
	return b.String()
}

// ClosedBy is how many closed tasks are counted at session's decisions.
func (r Report) ClosedBy(session string) int {
	if i := slices.IndexFunc(r.Sessions, func(s Session) bool { return s.ID == session }); i >= 0 {
		return r.Sessions[i].Closed
	}
	return 0
}

// CostText is a cost in dollars, marked when some tokens have no price.
func (r Report) CostText(s usage.Spent) string {
	out := fmt.Sprintf("$%.2f", s.Cost)
	if s.Cost == 0 && s.Unpriced > 0 {
		return "unknown"
	}
	if s.Unpriced > 0 {
		out += " (+" + usage.FormatTokens(s.Unpriced) + " unpriced tokens)"
	}
	if s.Partial {
		out += " at least"
	}
	return out
}

// FormatDuration is a short duration: 45s, 12m, 3h05m, 2d4h.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
