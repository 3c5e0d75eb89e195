package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

type statusOptions struct {
	Out, Err io.Writer
	Store    *state.Store
	// MaxCycles and DoneTokenMax are the configured caps, shown beside the
	// cycle counts (0 = no cap).
	MaxCycles    int
	DoneTokenMax int
	// Epic and Session filter states and history ("" = any).
	Epic, Session string
	JSON          bool
	JQ            string
	// History is how many logged decisions to show: 0 none, < 0 all.
	History int
	// Usage sums the tokens and cost of the whole decision log per
	// session, epic and claimed task (a read of the whole log).
	Usage bool
	// Why prints the full reason last fed back to this session.
	Why string
	// Watch follows the state directory: the full-screen view on TTY,
	// else a new table on each change.
	Watch bool
	TTY   *statusTTY
	// Tally reads an epic's closed and total tasks from bd for the
	// watch view's bars, at most once every TallyEvery (nil: the bars
	// come from the decisions alone).
	Tally      func(ctx context.Context, epic string) (beads.Tally, error)
	TallyEvery time.Duration
	Now        func() time.Time
	// Loc is the time zone times are shown in (nil = local).
	Loc *time.Location
	// RunsDir holds runtasks run's records ("" = none listed).
	RunsDir string
	// ConfigError is the configuration's error when it could not be read
	// (the state is then read from the default state directory).
	ConfigError string
}

func newStatusCmd(f *Factory) *cobra.Command {
	opts := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each session's cycle count, last decision and the decision history",
		Long: `status reads runtasks' state directory (state.dir, default .runtasks in the
project root). For each (session, epic) it shows the cycle count against
max_cycles, the last decision (its outcome, whether the stop was blocked or
allowed, and why), when it was made and the epic's beads counts at that
moment. Then it shows the last decisions from the decision log
(decisions.jsonl), newest last.

Counts: READY ready tasks, WIP in progress, BLKD blocked, DEFR deferred,
LEFT all unclosed; "-" when that part of the epic was not read.

TOKENS and COST are what the session's loop spent, from the agents'
transcripts (docs/usage.md); --usage sums the whole decision log per
session, epic and claimed task. Below the sessions, the runs of runtasks
run: running, finished, or dead (recorded running, process gone).

--why SESSION prints the whole reason last fed back to that session.
--watch is a live full-screen view of every loop (q quits, enter a
session's history, w the last reason); its progress bars are the epics'
closed/total from bd, read at most once every 3 seconds. Without a
terminal it prints a new table on each change (docs/watch.md).

--json prints {"state_dir":..., "runs":[...], "sessions":[...],
"history":[...]}; --jq filters that object with a jq expression (gojq) and
prints each result on its own line, strings without quotes.`,
		Example: `  runtasks status
  runtasks status --epic bd-x7y8 --history 30
  runtasks status --session 5c2e0b4a-... --json
  runtasks status --jq '.sessions[] | select(.cycles > 10) | .session'
  runtasks status --history -1 --jq '.history[] | select(.block | not) | .why'
  runtasks status --why 5c2e0b4a-...
  runtasks status --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out, opts.Err, opts.Now = f.Out, f.Err, f.Now
			if opts.Session == "" {
				opts.Session = sessionFromEnv(f.Getenv)
			}
			if opts.Watch {
				opts.TTY = ttyOf(f.In, f.Out)
			}
			cfg, _, err := f.LoadConfig(cmd, "")
			if err != nil {
				// The state can still be shown: a broken file is exactly
				// when a person needs to look.
				dir, derr := statusFallbackDir(f, cmd)
				if derr != nil {
					return exitCode(engine.ExitUsage, err)
				}
				opts.ConfigError = err.Error()
				fmt.Fprintf(f.Err, "runtasks: warning: the configuration is broken, so runtasks is off for this project until it is fixed:\n%s\n", err)
				opts.Store = &state.Store{Dir: dir, Warn: statusWarn(f.Err)}
				return runStatus(cmd.Context(), opts)
			}
			opts.RunsDir = headless.RunsDir(cfg)
			opts.MaxCycles = cfg.Workflow.StopHook.MaxCycles
			opts.DoneTokenMax = cfg.Workflow.DoneToken.Max
			opts.Store = &state.Store{Dir: cfg.StateDir(), Warn: statusWarn(f.Err)}
			if opts.TTY != nil {
				opts.Tally = newBeadsClient(f, cfg).Tally
			}
			if err := runStatus(cmd.Context(), opts); err != nil {
				return exitCode(1, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Epic, "epic", "", "show only this epic")
	cmd.Flags().StringVar(&opts.Session, "session", "", "show only this session id (env RUNTASKS_SESSION)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().StringVarP(&opts.JQ, "jq", "q", "", "filter the JSON output with a jq expression")
	cmd.Flags().IntVar(&opts.History, "history", 10, "logged decisions to show (0 none, -1 all)")
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "follow the loops live: full screen on a terminal (q quits, enter history, w full reason), else a new table on each change")
	cmd.Flags().StringVar(&opts.Why, "why", "", "print the full reason last fed back to this session (its block reason) and exit")
	cmd.Flags().BoolVar(&opts.Usage, "usage", false, "sum tokens and cost per session, epic and claimed task over the whole decision log")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, `  0  shown (also when the configuration is broken: a warning names it
     and the default state directory is read)
  1  failed: the state directory could not be read
  4  usage error: bad flags, a bad --jq expression`)
	return cmd
}

// statusFallbackDir is the state directory when the configuration cannot
// be read: --state-dir, else the default one in the project root.
func statusFallbackDir(f *Factory, cmd *cobra.Command) (string, error) {
	wd, err := f.Getwd()
	if err != nil {
		return "", err
	}
	root, _, err := f.findProject("", wd)
	if err != nil {
		return "", err
	}
	dir, _ := cmd.Flags().GetString("state-dir")
	if dir == "" {
		dir = config.DefaultStateDir
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return dir, nil
}

// statusWarn reports what the store recovered from on stderr.
func statusWarn(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintln(w, "runtasks: warning:", msg) }
}

// statusReport is the --json shape of runtasks status.
type statusReport struct {
	StateDir    string `json:"state_dir"`
	ConfigError string `json:"config_error,omitempty"`
	// Runs are runtasks run's records, newest first: live ones (running),
	// finished ones, and dead ones (recorded running, process gone).
	Runs     []headless.RunState `json:"runs"`
	Sessions []statusSession     `json:"sessions"`
	History  []state.Record      `json:"history"`
	// Epics and Tasks sum the tokens and cost the decision log recorded,
	// per epic and per claimed task.
	Epics []statusUsage `json:"epics,omitempty"`
	Tasks []statusUsage `json:"tasks,omitempty"`
}

type statusSession struct {
	state.State
	MaxCycles int `json:"max_cycles"`
	// Usage sums what the decision log recorded for the session and epic
	// (every loop, not only the current one: that is State.Spent).
	Usage *usage.Spent `json:"usage,omitempty"`
}

// spent is what the TOKENS and COST columns show: the decision log's sum
// with --usage, else the session's loop since it was armed (its state).
func (s statusSession) spent() *usage.Spent {
	if s.Usage != nil {
		return s.Usage
	}
	if s.Spent.IsZero() {
		return nil
	}
	return &s.Spent
}

// statusUsage is one epic's or task's sum (its Stops count the decisions
// that recorded usage).
type statusUsage struct {
	Epic string `json:"epic,omitempty"`
	Task string `json:"task,omitempty"`
	usage.Sum
}

func runStatus(ctx context.Context, o *statusOptions) error {
	switch {
	case o.Why != "":
		return statusWhy(o)
	case o.Watch:
		return statusWatch(ctx, o)
	}
	return runStatusOnce(ctx, o)
}

func runStatusOnce(ctx context.Context, o *statusOptions) error {
	rep, err := statusCollect(o)
	if err != nil {
		return err
	}
	switch {
	case o.JQ != "":
		return statusJQ(ctx, o.Out, o.JQ, rep)
	case o.JSON:
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return statusPrint(o, rep)
}

func (o *statusOptions) loc() *time.Location {
	if o.Loc != nil {
		return o.Loc
	}
	return time.Local
}

func statusCollect(o *statusOptions) (*statusReport, error) {
	rep := &statusReport{StateDir: o.Store.Dir, ConfigError: o.ConfigError, Runs: []headless.RunState{}, Sessions: []statusSession{}, History: []state.Record{}}
	if o.RunsDir != "" {
		runs, skipped, err := headless.ListRuns(o.RunsDir)
		if err != nil {
			return nil, err
		}
		for _, e := range skipped {
			if o.Store.Warn != nil {
				o.Store.Warn("run record skipped: " + e.Error())
			}
		}
		for _, r := range runs {
			if o.Epic == "" || r.Epic == o.Epic {
				rep.Runs = append(rep.Runs, r)
			}
		}
	}
	states, err := o.Store.List()
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		if (o.Session != "" && st.Session != o.Session) || (o.Epic != "" && st.Epic != o.Epic) {
			continue
		}
		rep.Sessions = append(rep.Sessions, statusSession{State: st, MaxCycles: o.maxFor(st.Epic)})
	}
	if o.Usage {
		if err := statusUsageSums(o, rep); err != nil {
			return nil, err
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

// statusWhy prints the full reason last fed back to the session (the
// latest of its states when it worked on several epics; --epic picks
// one). A session without one is an error that says what runtasks knows.
func statusWhy(o *statusOptions) error {
	states, err := o.Store.List()
	if err != nil {
		return err
	}
	var found *state.State
	for i, st := range states {
		if st.Session != o.Why || (o.Epic != "" && st.Epic != o.Epic) {
			continue
		}
		if found == nil || (st.LastReason != "" && (found.LastReason == "" || st.UpdatedAt.After(found.UpdatedAt))) {
			found = &states[i]
		}
	}
	switch {
	case found == nil:
		return fmt.Errorf("no state for session %s%s in %s", statusCell(o.Why, 40), statusFilterText(&statusOptions{Epic: o.Epic}), o.Store.Dir)
	case found.LastReason == "":
		last := "no decision yet"
		if found.Last != nil {
			last = "its last decision: " + string(found.Last.Outcome) + ", " + found.Last.Why
		}
		return fmt.Errorf("runtasks has fed no reason back to session %s (epic %s; %s)", statusCell(o.Why, 40), found.Epic, last)
	}
	_, err = fmt.Fprintln(o.Out, strings.TrimRight(found.LastReason, "\n"))
	return err
}

// statusUsageSums reads the whole decision log (filtered) and sums the
// recorded usage per session, epic and claimed task.
func statusUsageSums(o *statusOptions, rep *statusReport) error {
	recs, err := o.Store.Records(state.RecordFilter{Session: o.Session, Epic: o.Epic})
	if err != nil {
		return err
	}
	type key struct{ session, epic string }
	var sessions usage.Sums[key]
	var epics, tasks usage.Sums[string]
	taskEpic := map[string]string{} // a task's epic: its first record's
	for _, r := range recs {
		if r.Usage == nil {
			continue
		}
		sessions.Add(key{r.Session, r.Epic}, *r.Usage)
		epics.Add(r.Epic, *r.Usage)
		if r.Task != "" {
			if _, ok := taskEpic[r.Task]; !ok {
				taskEpic[r.Task] = r.Epic
			}
			tasks.Add(r.Task, *r.Usage)
		}
	}
	for i, s := range rep.Sessions {
		if sum, ok := sessions.Get(key{s.Session, s.Epic}); ok {
			rep.Sessions[i].Usage = &sum.Spent
		}
	}
	for _, e := range epics.Keys() {
		sum, _ := epics.Get(e)
		rep.Epics = append(rep.Epics, statusUsage{Epic: e, Sum: sum})
	}
	for _, t := range tasks.Keys() {
		sum, _ := tasks.Get(t)
		rep.Tasks = append(rep.Tasks, statusUsage{Epic: taskEpic[t], Task: t, Sum: sum})
	}
	return nil
}

// statusTokens is a token total cell ("-" when nothing was recorded).
func statusTokens(s *usage.Spent) string {
	if s == nil {
		return "-"
	}
	return usage.FormatTokens(s.Total())
}

// statusCost is a cost cell: "-" when nothing was recorded, "?" when no
// model had a price, a trailing "+" when some tokens had none.
func statusCost(s *usage.Spent) string {
	switch {
	case s == nil:
		return "-"
	case s.Cost == 0 && s.Unpriced > 0:
		return "?"
	case s.Unpriced > 0:
		return usage.FormatCost(s.Cost) + "+"
	}
	return usage.FormatCost(s.Cost)
}

// maxFor is the cap that applies to an epic's sessions: the done-token cap
// for the contract's epic-less state.
func (o *statusOptions) maxFor(epic string) int {
	if epic == state.NoEpic {
		return o.DoneTokenMax
	}
	return o.MaxCycles
}

// statusJQ prints each result of a jq expression over the report: strings
// raw, other values as compact JSON.
func statusJQ(ctx context.Context, w io.Writer, expr string, rep *statusReport) error {
	q, err := gojq.Parse(expr)
	if err != nil {
		return fmt.Errorf("--jq: %w", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return fmt.Errorf("--jq: %w", err)
	}
	// gojq works on plain JSON values.
	raw, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	iter := code.RunWithContext(ctx, v)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := r.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return fmt.Errorf("--jq: %w", err)
		}
		if s, ok := r.(string); ok {
			if _, err := fmt.Fprintln(w, s); err != nil {
				return err
			}
			continue
		}
		b, err := gojq.Marshal(r)
		if err != nil {
			return fmt.Errorf("--jq: %w", err)
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
}

func statusPrint(o *statusOptions, rep *statusReport) error {
	now := time.Now()
	if o.Now != nil {
		now = o.Now()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "State: %s\n\n", rep.StateDir)
	if len(rep.Sessions) == 0 {
		b.WriteString("No session state" + statusFilterText(o) + ".\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tEPIC\tCYCLES\tLAST\tSTOP\tREADY\tWIP\tBLKD\tDEFR\tLEFT\tTOKENS\tCOST\tWHEN\tWHY")
		for _, s := range rep.Sessions {
			outcome, stop, why, when := "-", "-", "-", statusAgo(now, s.UpdatedAt, o.loc())
			var counts *state.Counts
			if r := s.Last; r != nil {
				outcome, stop, why, counts = string(r.Outcome), statusStop(r.Block), statusCell(r.Why, 70), r.Counts
				when = statusAgo(now, r.Time, o.loc())
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				statusCell(s.Session, 40), statusCell(s.Epic, 24), statusCycles(s.Cycles, s.MaxCycles),
				statusCell(outcome, 16), stop, statusCounts(counts), statusTokens(s.spent())+"\t"+statusCost(s.spent())+"\t"+when+"\t"+why)
		}
		tw.Flush()
		if len(rep.Epics) > 0 {
			b.WriteString("\nTokens and cost recorded, by epic and claimed task:\n")
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "EPIC\tTASK\tSTOPS\tINPUT\tOUTPUT\tCACHE R\tCACHE W\tTOKENS\tCOST")
			for _, group := range [][]statusUsage{rep.Epics, rep.Tasks} {
				for _, u := range group {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", statusCell(u.Epic, 24), statusCell(u.Task, 24), u.Stops,
						usage.FormatTokens(u.Input), usage.FormatTokens(u.Output), usage.FormatTokens(u.CacheRead),
						usage.FormatTokens(u.CacheWrite), usage.FormatTokens(u.Total()), statusCost(&u.Spent))
				}
			}
			tw.Flush()
		}
		for _, s := range rep.Sessions {
			if s.Last != nil && len(s.Last.Actions) > 0 {
				fmt.Fprintf(&b, "\nBeads changed at the last stop of %s:\n", statusCell(s.Session, 40))
				for _, a := range s.Last.Actions {
					b.WriteString("  " + a + "\n")
				}
			}
		}
	}
	if len(rep.Runs) > 0 {
		b.WriteString("\nRuns (runtasks run), newest first:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tEPIC\tSTATUS\tCYCLES\tCLOSED\tSTARTED\tUPDATED\tWHY")
		for _, r := range rep.Runs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d/%d\t%s\t%s\t%s\n", statusCell(r.RunID, 32), statusCell(r.Epic, 24), r.Status,
				len(r.Cycles), r.MaxCycles, r.Closed, r.Total, statusAgo(now, r.StartedAt, o.loc()), statusAgo(now, r.UpdatedAt, o.loc()), statusCell(r.Why, 60))
		}
		tw.Flush()
	}
	if o.History != 0 {
		b.WriteString("\n")
		if len(rep.History) == 0 {
			b.WriteString("No decisions logged" + statusFilterText(o) + ".\n")
		} else {
			fmt.Fprintf(&b, "Last %d decision(s), oldest first:\n", len(rep.History))
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tSESSION\tEPIC\tOUTCOME\tSTOP\tCYCLE\tREADY\tWIP\tBLKD\tDEFR\tLEFT\tWHY")
			for _, r := range rep.History {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
					statusTime(now, r.Time, o.loc()), statusCell(r.Session, 40), statusCell(r.Epic, 24),
					statusCell(string(r.Outcome), 16), statusStop(r.Block), statusCycles(r.Cycle, r.Max),
					statusCounts(r.Counts), statusCell(r.Why, 70))
			}
			tw.Flush()
			var acts []string
			for _, r := range rep.History {
				for _, a := range r.Actions {
					acts = append(acts, statusTime(now, r.Time, o.loc())+"  "+statusCell(r.Session, 40)+"  "+a)
				}
			}
			if len(acts) > 0 {
				b.WriteString("\nBeads changed by runtasks (stuck tasks):\n  " + strings.Join(acts, "\n  ") + "\n")
			}
		}
	}
	_, err := io.WriteString(o.Out, b.String())
	return err
}

func statusFilterText(o *statusOptions) string {
	var parts []string
	if o.Session != "" {
		parts = append(parts, "session "+statusCell(o.Session, 40))
	}
	if o.Epic != "" {
		parts = append(parts, "epic "+statusCell(o.Epic, 24))
	}
	if len(parts) == 0 {
		return ""
	}
	return " for " + strings.Join(parts, ", ")
}

func statusStop(block bool) string {
	if block {
		return "block"
	}
	return "allow"
}

func statusCycles(n, max int) string {
	if max <= 0 {
		return strconv.Itoa(n) + "/∞"
	}
	return strconv.Itoa(n) + "/" + strconv.Itoa(max)
}

// statusCounts renders READY, WIP, BLKD, DEFR and LEFT as tab-separated
// cells; "-" for what was not read.
func statusCounts(c *state.Counts) string {
	if c == nil {
		return "-\t-\t-\t-\t-"
	}
	cells := make([]string, 0, 5)
	for _, n := range []int{c.Ready, c.InProgress, c.Blocked, c.Deferred, c.Remaining} {
		if n < 0 {
			cells = append(cells, "-")
		} else {
			cells = append(cells, strconv.Itoa(n))
		}
	}
	return strings.Join(cells, "\t")
}

// statusCell makes an outside string safe for one table cell: characters
// that are not printable (tabs, newlines, escape sequences) become '?' and it
// is cut to n runes.
func statusCell(s string, n int) string {
	if s == "" {
		return "-"
	}
	runes := make([]rune, 0, min(len(s), n+1))
	for _, r := range s {
		if len(runes) > n {
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		runes = append(runes, r)
	}
	if len(runes) > n {
		return strings.TrimRightFunc(string(runes[:n-1]), unicode.IsSpace) + "…"
	}
	return string(runes)
}

// statusAgo is a short relative time ("45s ago", "12m ago", "3h ago"), or
// the date when older than two days.
func statusAgo(now, t time.Time, loc *time.Location) string {
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

// statusTime is a log time: the clock time today, else the date too.
func statusTime(now, t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	lt, ln := t.In(loc), now.In(loc)
	if lt.Year() == ln.Year() && lt.YearDay() == ln.YearDay() {
		return lt.Format("15:04:05")
	}
	return lt.Format("2006-01-02 15:04:05")
}
