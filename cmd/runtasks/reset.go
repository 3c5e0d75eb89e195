package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/status"
)

type resetOptions struct {
	*Factory
	Store   *state.Store
	Epic    string // "" = any
	Session string // "" = any
	cfg     *config.Config
}

func newResetCmd(f *Factory) *cobra.Command {
	opts := &resetOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Clear sessions' cycle counters",
		Long: `reset removes the state of the sessions that match --session and --epic
(both optional; without either, every session's state): the cycle counter,
the no-progress count and the last decision. The next stop starts a fresh
loop. The decision log is kept; reset adds one "reset" record to it for each
state it clears, so status shows when counters were cleared.

It prints how many states it cleared.`,
		Example: `  # one session's loop on one epic
  runtasks reset --session 5c2e0b4a-... --epic bd-x7y8
  # every session driving an epic
  runtasks reset --epic bd-x7y8
  # everything
  runtasks reset`,
		Args:    cobra.NoArgs,
		PreRunE: loadConfig(f.LoadTrustedConfig, &opts.cfg, engine.ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = cmp.Or(opts.Session, sessionFromEnv(f.Getenv))
			opts.Store = &state.Store{Dir: opts.cfg.StateDir(), Warn: f.warn}
			return runReset(opts) // a failure is status 1
		},
	}
	cmd.Flags().StringVar(&opts.Epic, "epic", "", "clear only this epic's sessions")
	cmd.Flags().StringVar(&opts.Session, "session", "", "clear only this session id (env RUNTASKS_SESSION)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, `  0  cleared (also when nothing matched)
  1  failed: the state directory could not be changed
  4  usage or configuration error`)
	return cmd
}

func runReset(o *resetOptions) error {
	cleared, err := o.Store.Clear(o.Session, o.Epic) // what was cleared before an error counts
	now := o.Now()
	for _, st := range cleared {
		rec := state.Record{Time: now, Session: st.Session, Epic: st.Epic, Event: "reset",
			Outcome: state.OutcomeReset, Cycle: 0,
			Why: fmt.Sprintf("counters cleared by runtasks reset (was %d cycle(s))", st.Cycles)}
		if st.Last != nil {
			rec.Max = st.Last.Max
		}
		if aerr := o.Store.Append(rec); aerr != nil {
			o.warn(fmt.Sprint("decision log: ", aerr))
		}
	}
	var b strings.Builder
	if len(cleared) == 0 {
		b.WriteString("Nothing to reset" + status.FilterText(o.Session, o.Epic) + ".\n")
	} else {
		fmt.Fprintf(&b, "Cleared %d session state(s)%s:\n", len(cleared), status.FilterText(o.Session, o.Epic))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, st := range cleared {
			fmt.Fprintf(tw, "  %s\t%s\t%d cycle(s)\n", status.Cell(st.Session, 40), status.Cell(st.Epic, 24), st.Cycles)
		}
		tw.Flush()
	}
	_, werr := io.WriteString(o.Out, b.String())
	return cmp.Or(err, werr)
}
