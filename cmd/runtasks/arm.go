package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
)

type armOptions struct {
	Out     io.Writer
	Epic    string
	Session string
	Cfg     *config.Config
	Tracker claim.Shower
	Now     func() time.Time
}

func newArmCmd(f *Factory) *cobra.Command {
	opts := &armOptions{}
	cmd := &cobra.Command{
		Use:   "arm --epic E --session S",
		Short: "Bind a session to an epic: its Stop hook then drives that epic",
		Long: `arm binds an agent session to an epic, as the prompt hook does for
"/run-tasks <epic>", and refuses what it refuses: an id beads does not
know, a closed issue. The Stop hook then drives that session for the epic
without a static --epic; other sessions in the project stay untouched.
Given a task id, it drives the session until that task itself is closed.

The epic is resolved, at each stop, as: the stop hook's --epic flag, else the
session's binding, else RUNTASKS_EPIC, else workflow.epic. The binding lives
in the state directory (state.dir/bindings).`,
		Example: `  runtasks arm --epic bd-x7y8 --session "$SESSION"
  runtasks disarm --session "$SESSION"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Session == "" {
				opts.Session = sessionFromEnv(f.Getenv)
			}
			if opts.Session == "" {
				return errors.New("no session: give --session (or set RUNTASKS_SESSION)")
			}
			cfg, _, err := f.LoadConfig(cmd, "")
			if err != nil {
				return err
			}
			opts.Out, opts.Cfg, opts.Now = f.Out, cfg, f.Now
			opts.Tracker = newBeadsClient(f, cfg)
			return runArm(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Epic, "epic", "", "epic to drive (required)")
	cmd.Flags().StringVar(&opts.Session, "session", "", "agent session to bind (env RUNTASKS_SESSION, CLAUDE_SESSION_ID)")
	cmd.MarkFlagRequired("epic")
	setExitStatus(cmd, `  0  armed
  1  error (no session, bd failed, state directory unusable)
  3  beads has no such issue (nothing armed)
  4  the issue is closed (nothing armed)`)
	return cmd
}

func runArm(ctx context.Context, o *armOptions) error {
	store := &state.Store{Dir: o.Cfg.StateDir()}
	is, b, err := claim.Arm(ctx, o.Tracker, store, o.Session, o.Epic, o.Now())
	switch {
	case errors.Is(err, claim.ErrUnknown):
		return exitCode(engine.ExitNeedsPerson, fmt.Errorf("beads has no issue %s; nothing armed", o.Epic))
	case errors.Is(err, claim.ErrClosed):
		return exitCode(engine.ExitUsage, fmt.Errorf("%s is closed; nothing armed", o.Epic))
	case err != nil:
		return err
	}
	kind := "epic"
	if is.IssueType != beads.TypeEpic {
		kind = "task" // driven until it is closed itself
	}
	fmt.Fprintf(o.Out, "session %s armed for %s %s %q (since %s)\n", o.Session, kind, is.ID, is.Title, b.ArmedAt.Format(time.RFC3339))
	return nil
}

type disarmOptions struct {
	Out     io.Writer
	Session string
	Cfg     *config.Config
}

func newDisarmCmd(f *Factory) *cobra.Command {
	opts := &disarmOptions{}
	cmd := &cobra.Command{
		Use:   "disarm [--session S]",
		Short: "Release a session from its epic (every armed session without --session)",
		Long: `disarm removes a session's epic binding: its Stop hook no longer drives it
(unless a static epic applies: --epic, RUNTASKS_EPIC, workflow.epic). The
session's claimed tasks stay recorded. Without --session (or
RUNTASKS_SESSION) every armed session of the project is disarmed.`,
		Example: `  runtasks disarm --session "$SESSION"
  runtasks disarm            # every armed session`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Session == "" {
				opts.Session = sessionFromEnv(f.Getenv)
			}
			cfg, _, err := f.LoadConfig(cmd, "")
			if err != nil {
				return err
			}
			opts.Out, opts.Cfg = f.Out, cfg
			return runDisarm(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "session to release (env RUNTASKS_SESSION, CLAUDE_SESSION_ID; default: all)")
	setExitStatus(cmd, `  0  done (also when nothing was armed)
  1  error (state directory unusable)`)
	return cmd
}

func runDisarm(o *disarmOptions) error {
	store := &state.Store{Dir: o.Cfg.StateDir()}
	sessions := []string{o.Session}
	if o.Session == "" {
		all, err := store.Bindings()
		if err != nil {
			return err
		}
		sessions = nil
		for _, b := range all {
			if b.Epic != "" {
				sessions = append(sessions, b.Session)
			}
		}
	}
	n := 0
	for _, s := range sessions {
		var was string
		if _, err := store.UpdateBinding(s, func(b *state.Binding) error {
			was, b.Epic, b.ArmedAt = b.Epic, "", time.Time{}
			return nil
		}); err != nil {
			return err
		}
		if was != "" {
			fmt.Fprintf(o.Out, "session %s disarmed (was driving %s)\n", s, was)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(o.Out, "no armed session")
	}
	return nil
}
