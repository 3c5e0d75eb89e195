package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/status"
)

type statusOptions struct {
	*Factory
	status.Options
	JSON  bool
	JQ    string
	Why   string // the session whose last reason is printed
	Watch bool
	TTY   bool // --watch draws full screen: stdin and stdout are a terminal
	// Tally reads an epic's tally from bd for the watch view's bars (nil:
	// the decisions' bars).
	Tally func(ctx context.Context, epic string) (beads.Tally, error)
	Loc   *time.Location
}

func newStatusCmd(f *Factory) *cobra.Command {
	opts := &statusOptions{Factory: f, Loc: time.Local}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each session's cycle count, last decision and the decision history",
		Long: `status reads runtasks' state directory (state.dir, default .runtasks). For
each (session, epic) it shows the cycle count against max_cycles, the last
decision (outcome, stop blocked or allowed, why, when), the epic's counts
then (READY, WIP in progress, BLKD blocked, DEFR deferred, LEFT unclosed;
"-" not read) and the TOKENS and COST the loop spent (docs/usage.md); then
runtasks run's runs (running, finished, or dead: process gone) and the last
decisions of the decision log, newest last.

--usage sums the whole decision log per session, epic and claimed task.
--why SESSION prints the whole reason last fed back to that session, then
the title of each task it names (one bd query).
--watch is a live full-screen view of every loop (q quits, enter history,
w last reason), its bars the epics' closed/total from bd, read at most once
every 3 seconds; without a terminal, a new table on each change
(docs/watch.md). --json prints {"state_dir", "runs", "sessions", "history"};
--jq filters it with a jq expression, one result a line, strings unquoted.`,
		Example: `  runtasks status
  runtasks status --epic bd-x7y8 --history 30
  runtasks status --session 5c2e0b4a-... --json
  runtasks status --jq '.sessions[] | select(.cycles > 10) | .session'
  runtasks status --history -1 --jq '.history[] | select(.block | not) | .why'
  runtasks status --why 5c2e0b4a-...
  runtasks status --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = cmp.Or(opts.Session, sessionFromEnv(f.Getenv))
			in, ok := f.In.(*os.File)
			opts.TTY = opts.Watch && ok && headless.IsTerminal(in) && headless.IsTerminal(f.Out)
			opts.Store = &state.Store{Warn: f.warn}
			cfg, _, err := f.LoadTrustedConfig(cmd, "")
			if err != nil {
				// A broken file is exactly when a person needs to look: the
				// state directory is --state-dir, else the default; without a
				// project, err is the error.
				root, _, ferr := f.findProject(nil, "")
				if ferr != nil {
					return exitCode(engine.ExitUsage, err)
				}
				dir, _ := cmd.Flags().GetString("state-dir")
				opts.Store.Dir = (&config.Config{Root: root}).Path(cmp.Or(dir, config.DefaultStateDir))
				opts.ConfigError = err.Error()
				f.warn("the configuration is broken, so runtasks is off for this project until it is fixed:\n" + err.Error())
				return runStatus(cmd.Context(), opts)
			}
			opts.RunsDir, opts.Prices, opts.Store.Dir = headless.RunsDir(cfg), cfg.Usage.Prices, cfg.StateDir()
			bd := newBeadsClient(f, cfg)
			opts.Tally = bd.Tally // read by the full-screen view only
			opts.Tasks = func(epic string) ([]beads.Issue, error) {
				e, sub, err := bd.Descendants(cmd.Context(), epic)
				return append([]beads.Issue{e}, sub...), err
			}
			return runStatus(cmd.Context(), opts) // a failure is status 1
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
  4  usage error: bad flags, a bad --jq expression, an --epic beads does
     not know (asked only when nothing is recorded for it)`)
	return cmd
}

func runStatus(ctx context.Context, o *statusOptions) error {
	switch {
	case o.Why != "":
		reason, err := status.LastReason(&o.Options, o.Why)
		if err == nil {
			_, err = fmt.Fprintln(o.Out, reason)
		}
		return err
	case o.Watch:
		return statusWatch(ctx, o)
	}
	rep, err := status.Collect(&o.Options)
	if err != nil {
		return err
	}
	if o.Epic != "" && len(rep.Sessions) == 0 && len(rep.History) == 0 && o.Tasks != nil {
		// Nothing recorded: a typo and an epic not yet driven differ.
		_, err := o.Tasks(o.Epic)
		if err := unknownEpic(o.Epic, err); err != nil {
			return err
		}
	}
	return printStatus(ctx, o, rep)
}

// printStatus prints rep as --jq, --json or the tables ask.
func printStatus(ctx context.Context, o *statusOptions, rep *status.Report) error {
	switch {
	case o.JQ != "":
		return status.JQ(ctx, o.Out, o.JQ, rep)
	case o.JSON:
		return printJSON(o.Out, rep)
	}
	return status.Print(o.Out, &o.Options, rep, o.Now(), o.Loc)
}
