package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
)

type armOptions struct {
	*Factory
	Epic, Session string
	cfg           *config.Config
}

func newArmCmd(f *Factory) *cobra.Command {
	o := &armOptions{Factory: f}
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
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if o.Session = cmp.Or(o.Session, sessionFromEnv(f.Getenv)); o.Session == "" {
				return errors.New("no session: give --session (or set RUNTASKS_SESSION)")
			}
			return loadConfig(f.LoadConfig, &o.cfg, engine.ExitFailed)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runArm(cmd.Context(), o) },
	}
	cmd.Flags().StringVar(&o.Epic, "epic", "", "epic to drive (required)")
	cmd.Flags().StringVar(&o.Session, "session", "", "agent session to bind (env RUNTASKS_SESSION, CLAUDE_SESSION_ID)")
	cmd.MarkFlagRequired("epic")
	setExitStatus(cmd, `  0  armed
  1  error (no session, bd failed, state directory unusable)
  3  beads has no such issue (nothing armed)
  4  the issue is closed (nothing armed)`)
	return cmd
}

func runArm(ctx context.Context, o *armOptions) error {
	is, b, err := claim.Arm(ctx, newBeadsClient(o.Factory, o.cfg), &state.Store{Dir: o.cfg.StateDir()}, o.Session, o.Epic, o.Now())
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
		kind = "task"
	}
	fmt.Fprintf(o.Out, "session %s armed for %s %s %q (since %s)\n", o.Session, kind, is.ID, is.Title, b.ArmedAt.Format(time.RFC3339))
	return nil
}

type disarmOptions struct {
	*Factory
	Session string
	All     bool
	// Shell is the agent session whose shell runs the command (zero: a person's).
	Shell engine.Shell
	cfg   *config.Config
	// notify sends a refused disarm's event to workflow.notify.
	notify func(in engine.Input, dec engine.Decision) (string, error)

	released int
}

func newDisarmCmd(f *Factory) *cobra.Command {
	opts := &disarmOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "disarm (--session S | --all)",
		Short: "Release a session from its epic (--all: every armed session)",
		Long: `disarm removes a session's binding (--session, else RUNTASKS_SESSION; --all:
every armed session): its Stop hook no longer drives it, unless a static
epic applies. Its claimed tasks stay recorded. Given neither, disarm
releases nothing and lists the armed sessions.

The loop is the person's, not the agent's: a disarm run from inside the
agent of the session it names (its shell has the session in
CLAUDE_CODE_SESSION_ID, RUNTASKS_SESSION under CLAUDECODE=1,
CODEX_THREAD_ID or GEMINI_SESSION_ID; without --session that session is
the one named), or --all from any agent's shell, releases nothing: the
attempt is recorded as the session's last decision (self_disarm, needs a
person) and sent to workflow.notify. Disarm from your own terminal.`,
		Example: `  runtasks disarm --session "$SESSION"
  runtasks disarm --all      # every armed session
  runtasks disarm            # releases nothing: lists the armed sessions`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Shell = hook.ShellSession(f.Getenv)
			if opts.Session == "" && !opts.All {
				// A Codex shell has no RUNTASKS_SESSION: its own session is the one named.
				opts.Session = cmp.Or(sessionFromEnv(f.Getenv), opts.Shell.Session)
			}
			cfg, src, err := f.LoadConfig(cmd, "")
			if err != nil {
				return err
			}
			opts.cfg, opts.notify = cfg, notifySender(f, cmd, cfg, src, projectTrusted(f, cfg))
			return runDisarm(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "session to release (env RUNTASKS_SESSION, CLAUDE_SESSION_ID)")
	cmd.Flags().BoolVar(&opts.All, "all", false, "release every armed session of the project")
	cmd.MarkFlagsMutuallyExclusive("session", "all")
	setExitStatus(cmd, `  0  done (also when nothing was armed)
  1  error (state directory unusable)
  3  refused: run from inside the session's own agent (recorded; the person told)
  4  no session given and no --all: nothing released (the armed sessions listed)`)
	return cmd
}

func runDisarm(o *disarmOptions) error {
	store := &state.Store{Dir: o.cfg.StateDir()}
	if o.All && o.Shell.Agent != "" {
		// Only a person releases every loop; the agent's own session records the attempt.
		if o.Shell.Session != "" {
			if err := o.disarm(store, o.Shell.Session); err != nil && !errors.As(err, new(*ExitError)) {
				return err
			}
		}
		return exitCode(engine.ExitNeedsPerson, fmt.Errorf("disarm --all from inside an agent's shell (%s) is refused; nothing released", o.Shell.Var))
	}
	if o.Session == "" && !o.All {
		listArmed(o.Err, store)
		return exitCode(engine.ExitUsage, errors.New("disarm: no session given (--session S) and no --all; nothing released"))
	}
	bindings := []state.Binding{{Session: o.Session}}
	if o.All {
		var err error
		if bindings, err = store.Bindings(); err != nil {
			return err
		}
	}
	for _, b := range bindings {
		if o.All && b.Epic == "" {
			continue // not armed
		}
		if err := o.disarm(store, b.Session); err != nil {
			return err
		}
	}
	if o.released == 0 {
		fmt.Fprintln(o.Out, "no armed session")
	}
	return nil
}

// disarm releases one session, or reports (and notifies) a refusal.
func (o *disarmOptions) disarm(store *state.Store, session string) error {
	was, refused, err := engine.Disarm(store, o.cfg, session, o.Shell, o.Now())
	if refused != nil {
		if _, nerr := o.notify(engine.Input{SessionID: session, Agent: o.Shell.Agent}, *refused); nerr != nil {
			fmt.Fprintf(o.Err, "runtasks: notify: %v\n", nerr)
		}
		if err == nil {
			err = exitCode(engine.ExitNeedsPerson, fmt.Errorf("session %s stays armed for %s: a disarm from inside its own agent (%s) is refused; "+
				"the attempt is recorded and the person told", session, refused.Epic, o.Shell.Var))
		}
	}
	if err == nil && was != "" {
		fmt.Fprintf(o.Out, "session %s disarmed (was driving %s)\n", session, was)
		o.released++
	}
	return err
}

// listArmed lists the armed sessions, one a line.
func listArmed(w io.Writer, store *state.Store) {
	all, err := store.Bindings()
	if err != nil {
		fmt.Fprintf(w, "runtasks: bindings: %v\n", err)
		return
	}
	if all = slices.DeleteFunc(all, func(b state.Binding) bool { return b.Epic == "" }); len(all) == 0 {
		fmt.Fprintln(w, "no armed session")
		return
	}
	fmt.Fprintln(w, "armed sessions:")
	for _, b := range all {
		fmt.Fprintf(w, "  %s  %s  armed %s\n", b.Session, b.Epic, b.ArmedAt.UTC().Format(time.RFC3339))
	}
}
