package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
)

type claimOptions struct {
	*Factory
	ID, Session, Actor string
	JSON               bool
	cfg                *config.Config
}

func newClaimCmd(f *Factory) *cobra.Command {
	opts := &claimOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "claim <id>",
		Short: "Claim a beads task for a session and create its run folder",
		Long: `claim loads a task and its ancestors from beads (the parent is the plan, the
top the goal), claims it atomically (bd update --claim) and writes its run
folder runs/run-YYYYMMDD-HHMMSS-<id>/ (THOUGHTS.md, DECISIONS.md,
ASSUMPTIONS.md, LEARNINGS.md, RESULTS.md, timeline.yaml, metadata.yaml).

The beads actor is claim.actor (else BEADS_ACTOR, else USER) + "@<session>",
so a task another session holds is never stolen. With a session (--session,
else RUNTASKS_SESSION, else CLAUDE_SESSION_ID) the claim is recorded in its
binding: its stop is incomplete while RESULTS.md is the untouched template.
The prompt hook does the same for "claim <id>", "work on <id>"…`,
		Example: `  runtasks claim bd-x7y8.3 --session "$SESSION"
  runtasks claim bd-x7y8.3 --json | jq -r .run_dir`,
		Args:    cobra.ExactArgs(1),
		PreRunE: loadConfig(f.LoadConfig, &opts.cfg, engine.ExitFailed),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.Session = args[0], cmp.Or(opts.Session, sessionFromEnv(f.Getenv))
			return runClaim(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "agent session the claim is for (env RUNTASKS_SESSION, CLAUDE_SESSION_ID)")
	cmd.Flags().StringVar(&opts.Actor, "actor", "", "beads actor (claim.actor; default BEADS_ACTOR, else USER)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the claim as JSON")
	setExitStatus(cmd, `  0  claimed (or already claimed by this session)
  1  error: bd failed, bad configuration, the run folder could not be written
  2  the task is claimed by someone else (nothing changed)
  3  beads has no such issue (nothing created)
  4  the task is closed, or the id is an epic: /run-tasks <id> (or
     runtasks arm) drives it; nothing claimed`)
	return cmd
}

// sessionFromEnv is the session a hand-run command acts for.
func sessionFromEnv(getenv func(string) string) string {
	return cmp.Or(getenv("RUNTASKS_SESSION"), getenv("CLAUDE_SESSION_ID"))
}

// claimRequest builds the claim of id for session from the configuration.
func claimRequest(cfg *config.Config, id, session, actor string, getenv func(string) string, now time.Time) claim.Request {
	return claim.Request{Task: id, Session: session, Actor: claim.Actor(cmp.Or(actor, cfg.Claim.Actor), getenv, session),
		Root: cfg.Root, RunsDir: cfg.Claim.RunsDir, Templates: cfg.Path(cfg.Claim.Templates), Now: now, Store: &state.Store{Dir: cfg.StateDir()}}
}

func runClaim(ctx context.Context, o *claimOptions) error {
	res, err := claim.Claim(ctx, newBeadsClient(o.Factory, o.cfg), claimRequest(o.cfg, o.ID, o.Session, o.Actor, o.Getenv, o.Now()))
	switch {
	case errors.Is(err, claim.ErrEpic) || errors.Is(err, claim.ErrClosed):
		return exitCode(engine.ExitUsage, err)
	case errors.As(err, new(*claim.HeldError)):
		return exitCode(engine.ExitWorkLeft, err)
	case errors.Is(err, claim.ErrUnknown):
		return exitCode(engine.ExitNeedsPerson, fmt.Errorf("beads has no issue %s; nothing was created", o.ID))
	case err != nil:
		return err
	}
	if o.JSON {
		return printJSON(o.Out, struct {
			claim.Result
			Context string `json:"context"`
		}{res, res.Text()})
	}
	fmt.Fprintln(o.Out, headless.Clean(res.Text()))
	return nil
}
