// Package status is what runtasks status shows of a state directory:
// each loop, the last decisions, the usage recorded and runtasks run's
// records, as tables, JSON or a jq expression's results.
package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/itchyny/gojq"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// Options say what a report holds.
type Options struct {
	Store *state.Store
	// Epic and Session filter states and history ("" = any).
	Epic, Session string
	// History is how many logged decisions to show: 0 none, < 0 all.
	History int
	// Usage sums the whole decision log per session, epic and claimed task.
	Usage   bool
	RunsDir string // runtasks run's records ("" = none listed)
	// ConfigError is why the configuration could not be read.
	ConfigError string
	Prices      []usage.Price // the project's usage.prices
	// Tasks, when set, reads an epic and its tasks from beads: LastReason
	// names the ones its reason mentions, with their titles.
	Tasks func(epic string) ([]beads.Issue, error)
}

// Report is what status shows; its JSON is status --json.
type Report struct {
	StateDir    string              `json:"state_dir"`
	ConfigError string              `json:"config_error,omitempty"`
	Runs        []headless.RunState `json:"runs"` // newest first
	Sessions    []Session           `json:"sessions"`
	History     []state.Record      `json:"history"`
	// Epics and Tasks sum the usage recorded per epic and claimed task.
	Epics []usage.Row `json:"epics,omitempty"`
	Tasks []usage.Row `json:"tasks,omitempty"`
}

// Session is one (session, epic) loop's state with its count and cap.
type Session struct {
	state.State
	Cycle     int `json:"cycle"`
	MaxCycles int `json:"max_cycles"`
	// Usage sums every loop of the session and epic in the decision log
	// (State.Spent is the current loop's).
	Usage *usage.Spent `json:"usage,omitempty"`
}

// spent is what the TOKENS and COST columns show: --usage's sum, else the
// current loop's.
func (s Session) spent() *usage.Spent {
	if s.Usage != nil {
		return s.Usage
	}
	if s.Spent.IsZero() {
		return nil
	}
	return &s.Spent
}

func Collect(o *Options) (*Report, error) {
	rep := &Report{StateDir: o.Store.Dir, ConfigError: o.ConfigError, Runs: []headless.RunState{}, Sessions: []Session{}, History: []state.Record{}}
	if o.RunsDir != "" {
		runs, skipped, err := headless.ListRuns(o.RunsDir)
		if err != nil {
			return nil, err
		}
		for _, e := range skipped {
			o.Store.Warnf("run record skipped: %v", e)
		}
		rep.Runs = append(rep.Runs, slices.DeleteFunc(runs, func(r headless.RunState) bool { return o.Epic != "" && r.Epic != o.Epic })...)
	}
	states, err := o.Store.List()
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		if (o.Session != "" && st.Session != o.Session) || (o.Epic != "" && st.Epic != o.Epic) {
			continue
		}
		n, max := st.Count()
		rep.Sessions = append(rep.Sessions, Session{State: st, Cycle: n, MaxCycles: max})
	}
	if o.Usage { // a read of the whole (filtered) log
		recs, err := o.Store.Records(state.RecordFilter{Session: o.Session, Epic: o.Epic})
		if err != nil {
			return nil, err
		}
		var sessions map[[2]string]*usage.Sum
		sessions, rep.Epics, rep.Tasks = Rollup(recs)
		for i, s := range rep.Sessions {
			if sum := sessions[[2]string{s.Session, s.Epic}]; sum != nil {
				rep.Sessions[i].Usage = &sum.Spent
			}
		}
	}
	if o.History != 0 {
		recs, err := o.Store.Records(state.RecordFilter{Session: o.Session, Epic: o.Epic, Limit: max(o.History, 0)})
		if err != nil {
			return nil, err
		}
		if recs != nil {
			rep.History = recs
		}
	}
	return rep, nil
}

// LastReason is the full reason last fed back to session (the latest of
// its epics', or o.Epic's); none is an error saying what runtasks knows.
func LastReason(o *Options, session string) (string, error) {
	states, err := o.Store.List()
	if err != nil {
		return "", err
	}
	var found *state.State
	for i, st := range states {
		if st.Session != session || (o.Epic != "" && st.Epic != o.Epic) {
			continue
		}
		if found == nil || (st.LastReason != "" && (found.LastReason == "" || st.UpdatedAt.After(found.UpdatedAt))) {
			found = &states[i]
		}
	}
	switch {
	case found == nil:
		return "", fmt.Errorf("no state for session %s%s in %s", Cell(session, 40), FilterText("", o.Epic), o.Store.Dir)
	case found.LastReason == "":
		last := "no decision yet"
		if found.Last != nil {
			last = "its last decision: " + string(found.Last.Outcome) + ", " + headless.Clean(found.Last.Why)
		}
		return "", fmt.Errorf("runtasks has fed no reason back to session %s (epic %s; %s)", Cell(session, 40), found.Epic, last)
	}
	reason := strings.TrimRight(headless.Clean(found.LastReason), "\n")
	if o.Tasks == nil {
		return reason, nil
	}
	tasks, err := o.Tasks(found.Epic)
	if err != nil {
		o.Store.Warnf("the titles of the tasks named were not read: %v", err)
		return reason, nil
	}
	words := strings.FieldsFunc(reason, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-", r)
	})
	var named []string
	for _, is := range tasks {
		if slices.ContainsFunc(words, func(w string) bool { return strings.TrimRight(w, ".") == is.ID }) {
			named = append(named, "  "+is.ID+"  "+Cell(is.Title, 100))
		}
	}
	if len(named) > 0 {
		reason += "\n\nNamed above:\n" + strings.Join(named, "\n")
	}
	return reason, nil
}

// Rollup sums the usage recs recorded per (session, epic), per epic and
// per claimed task, in the order first met.
func Rollup(recs []state.Record) (sessions map[[2]string]*usage.Sum, epics, tasks []usage.Row) {
	sessions = map[[2]string]*usage.Sum{}
	epicAt, taskAt := map[string]int{}, map[string]int{}
	for _, r := range recs {
		if r.Usage == nil {
			continue
		}
		key := [2]string{r.Session, r.Epic}
		if sessions[key] == nil {
			sessions[key] = &usage.Sum{}
		}
		sessions[key].Add(*r.Usage)
		epics = addTo(epics, epicAt, r.Epic, usage.Row{Epic: r.Epic}, *r.Usage)
		if r.Task != "" {
			tasks = addTo(tasks, taskAt, r.Task, usage.Row{Epic: r.Epic, Task: r.Task}, *r.Usage)
		}
	}
	return sessions, epics, tasks
}

// addTo adds spent to key's row of rows (at: the rows' indexes by key),
// appending row for a key first met.
func addTo(rows []usage.Row, at map[string]int, key string, row usage.Row, spent usage.Spent) []usage.Row {
	i, ok := at[key]
	if !ok {
		i, at[key], rows = len(rows), len(rows), append(rows, row)
	}
	rows[i].Add(spent)
	return rows
}

// spentCells renders TOKENS and COST as tab-separated cells; COST is "-"
// when nothing was recorded (TOKENS says so), "?" without a price, and
// ends in "+" when some tokens are unpriced.
func spentCells(s *usage.Spent) string {
	if s == nil {
		return "not recorded\t-"
	}
	cost := usage.FormatCost(s.Cost)
	switch {
	case s.Cost == 0 && s.Unpriced > 0:
		cost = "?"
	case s.Unpriced > 0:
		cost += "+"
	}
	return usage.FormatTokens(s.Total()) + "\t" + cost
}

// JQ prints each result of a jq expression over the report: strings raw,
// other values as compact JSON.
func JQ(ctx context.Context, w io.Writer, expr string, rep *Report) error {
	q, err := gojq.Parse(expr)
	if err != nil {
		return fmt.Errorf("--jq: %w", err)
	}
	var v any // gojq works on plain JSON values
	raw, err := json.Marshal(rep)
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		return err
	}
	for iter := q.RunWithContext(ctx, v); ; {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		var out []byte
		switch r := r.(type) {
		case error:
			if halt, ok := errors.AsType[*gojq.HaltError](r); ok && halt.Value() == nil {
				return nil
			}
			return fmt.Errorf("--jq: %w", r)
		case string:
			out = []byte(r)
		default:
			if out, err = gojq.Marshal(r); err != nil {
				return fmt.Errorf("--jq: %w", err)
			}
		}
		if _, err := fmt.Fprintf(w, "%s\n", out); err != nil {
			return err
		}
	}
}

func Print(w io.Writer, o *Options, rep *Report, now time.Time, loc *time.Location) error {
	var b strings.Builder
	fmt.Fprintf(&b, "State: %s\n\n", rep.StateDir)
	if len(rep.Sessions) == 0 {
		b.WriteString("No session state" + FilterText(o.Session, o.Epic) + ".\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tEPIC\tCYCLES\tLAST\tSTOP\tREADY\tWIP\tBLKD\tDEFR\tLEFT\tTOKENS\tCOST\tWHEN\tWHY")
		for _, s := range rep.Sessions {
			outcome, stop, why, when := "-", "-", "-", ago(now, s.UpdatedAt, loc)
			var counts *state.Counts
			if r := s.Last; r != nil {
				outcome, stop, why, counts = string(r.Outcome), StopCell(r.Block), Cell(r.Why, 70), r.Counts
				when = ago(now, r.Time, loc)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				Cell(s.Session, 40), Cell(s.Epic, 24), cycles(s.Cycle, s.MaxCycles),
				Cell(outcome, 16), stop, countCells(counts), spentCells(s.spent())+"\t"+when+"\t"+why)
		}
		tw.Flush()
		if len(rep.Epics) > 0 {
			b.WriteString("\nTokens and cost recorded, by epic and claimed task:\n")
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "EPIC\tTASK\tSTOPS\tINPUT\tOUTPUT\tCACHE R\tCACHE W\tTOKENS\tCOST")
			for _, group := range [][]usage.Row{rep.Epics, rep.Tasks} {
				for _, u := range group {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", Cell(u.Epic, 24), Cell(u.Task, 24), u.Stops,
						usage.FormatTokens(u.Input), usage.FormatTokens(u.Output), usage.FormatTokens(u.CacheRead),
						usage.FormatTokens(u.CacheWrite), spentCells(&u.Spent))
				}
			}
			tw.Flush()
		}
		for _, s := range rep.Sessions {
			if s.Last != nil && len(s.Last.Actions) > 0 {
				fmt.Fprintf(&b, "\nBeads changed at the last stop of %s:\n  %s\n", Cell(s.Session, 40), strings.Join(s.Last.Actions, "\n  "))
			}
		}
		var models []string
		for _, s := range rep.Sessions {
			if sp := s.spent(); sp != nil && sp.Unpriced > 0 {
				models = append(models, sp.Models...)
			}
		}
		for _, m := range usage.Unpriced(o.Prices, models) {
			fmt.Fprintf(&b, "\nNo price for %s: its tokens are counted, its cost is not (COST ?; add it to usage.prices, docs/usage.md).\n", Cell(m, 60))
		}
	}
	if len(rep.Runs) > 0 {
		b.WriteString("\nRuns (runtasks run), newest first:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tEPIC\tSTATUS\tCYCLES\tCLOSED\tSTARTED\tUPDATED\tWHY")
		for _, r := range rep.Runs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d/%d\t%s\t%s\t%s\n", Cell(r.RunID, 32), Cell(r.Epic, 24), r.Status,
				r.Cycle, r.MaxCycles, r.Closed, r.Total, ago(now, r.StartedAt, loc), ago(now, r.UpdatedAt, loc), Cell(r.Why, 60))
		}
		tw.Flush()
	}
	if o.History != 0 {
		b.WriteString("\n")
		if len(rep.History) == 0 {
			b.WriteString("No decisions logged" + FilterText(o.Session, o.Epic) + ".\n")
		} else {
			fmt.Fprintf(&b, "Last %d decision(s), oldest first:\n", len(rep.History))
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tSESSION\tEPIC\tOUTCOME\tSTOP\tCYCLE\tREADY\tWIP\tBLKD\tDEFR\tLEFT\tWHY")
			for _, r := range rep.History {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
					clock(now, r.Time, loc), Cell(r.Session, 40), Cell(r.Epic, 24),
					Cell(string(r.Outcome), 16), StopCell(r.Block), cycles(r.Cycle, r.Max),
					countCells(r.Counts), Cell(r.Why, 70))
			}
			tw.Flush()
			var acts []string
			for _, r := range rep.History {
				for _, a := range r.Actions {
					acts = append(acts, clock(now, r.Time, loc)+"  "+Cell(r.Session, 40)+"  "+a)
				}
			}
			if len(acts) > 0 {
				b.WriteString("\nBeads changed by runtasks (stuck tasks):\n  " + strings.Join(acts, "\n  ") + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FilterText says which session and epic are shown ("" = any).
func FilterText(session, epic string) string {
	var parts []string
	if session != "" {
		parts = append(parts, "session "+Cell(session, 40))
	}
	if epic != "" {
		parts = append(parts, "epic "+Cell(epic, 24))
	}
	if len(parts) == 0 {
		return ""
	}
	return " for " + strings.Join(parts, ", ")
}

// StopCell is what a decision did with the stop: block or allow.
func StopCell(block bool) string {
	if block {
		return "block"
	}
	return "allow"
}

func cycles(n, max int) string {
	if max <= 0 {
		return strconv.Itoa(n) + "/∞"
	}
	return strconv.Itoa(n) + "/" + strconv.Itoa(max)
}

// countCells renders READY, WIP, BLKD, DEFR and LEFT as tab-separated
// cells; "-" for what was not read.
func countCells(c *state.Counts) string {
	cells := []string{"-", "-", "-", "-", "-"}
	if c != nil {
		for i, n := range []int{c.Ready, c.InProgress, c.Blocked, c.Deferred, c.Remaining} {
			if n >= 0 {
				cells[i] = strconv.Itoa(n)
			}
		}
	}
	return strings.Join(cells, "\t")
}

// Cell makes an outside string safe for one table cell: escapes are
// stripped (headless.Clean), other unprintable characters become '?', and
// it is cut to n runes.
func Cell(s string, n int) string {
	if s == "" {
		return "-"
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, headless.Clean(s))
	if runes := []rune(s); len(runes) > n {
		return strings.TrimRightFunc(string(runes[:n-1]), unicode.IsSpace) + "…"
	}
	return s
}

// ago is a short relative time ("45s ago"), or the date after two days.
func ago(now, t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.In(loc).Format("2006-01-02 15:04")
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return t.In(loc).Format("2006-01-02 15:04")
}

// clock is a log time: the clock time today, else the date too.
func clock(now, t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	lt, ln := t.In(loc), now.In(loc)
	if lt.Year() == ln.Year() && lt.YearDay() == ln.YearDay() {
		return lt.Format("15:04:05")
	}
	return lt.Format("2006-01-02 15:04:05")
}
