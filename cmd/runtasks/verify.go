package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
)

type verifyOptions struct {
	*Factory
	IDs []string
	cfg *config.Config
}

func newVerifyCmd(f *Factory) *cobra.Command {
	o := &verifyOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "verify [TASK…]",
		Short: "Run tasks' workflow.verify checks by hand or in CI",
		Long: `verify runs the checks each task must pass to be closed (workflow.verify,
docs/checkers.md#verified-close) in the task's worktree, or the project
root, and prints each task's verdict. Without TASK it verifies every closed
task of the epic. A pass is recorded in the decision log, as the pre-tool
gate records it, so the stop audit does not run it again at that commit.`,
		Example: `  # in CI: every closed task of the epic still passes its checks
  runtasks verify --epic bd-x7y8

  # one task, before closing it
  runtasks verify bd-x7y8.3`,
		PreRunE: loadConfig(f.LoadConfig, &o.cfg, engine.ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IDs = args
			return runVerify(cmd.Context(), o)
		},
	}
	cmd.Flags().String("epic", "", "epic whose closed tasks to verify (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	setExitStatus(cmd, `  0  every task passed its checks (or has none)
  2  a task failed its checks (their output's end is printed)
  4  usage or setup error: no task and no epic, bad configuration, bd failing`)
	return cmd
}

func runVerify(ctx context.Context, o *verifyOptions) error {
	p := stopPorts(o.Factory, o.cfg)
	epic := o.cfg.Workflow.Epic
	var tasks []beads.Issue
	switch {
	case len(o.IDs) == 0 && epic == "":
		return exitCode(engine.ExitUsage, errors.New("name tasks, or an epic with --epic (or workflow.epic)"))
	case len(o.IDs) == 0:
		_, all, err := p.Beads.Descendants(ctx, epic)
		if err != nil {
			return exitCode(engine.ExitUsage, err)
		}
		tasks = slices.DeleteFunc(all, func(is beads.Issue) bool { return is.Status != beads.StatusClosed || is.IssueType == beads.TypeEpic })
	}
	for _, id := range o.IDs {
		is, err := p.Beads.Show(ctx, id)
		if err != nil {
			return exitCode(engine.ExitUsage, err)
		}
		tasks = append(tasks, is)
	}
	store := &state.Store{Dir: o.cfg.StateDir()}
	failed := 0
	for _, is := range tasks {
		v := engine.VerifyTask(ctx, o.cfg, p, is)
		v.Check = is.ID
		checkPrint(o.Out, v.Verdict, "", o.cfg.Workflow.FeedbackLimit)
		if !v.Passed() {
			failed++
			continue
		}
		if err := store.Append(v.Record(engine.Input{Event: "verify"}, cmp.Or(epic, is.Parent), p.Now())); err != nil {
			fmt.Fprintf(o.Out, "warning: %v\n", err)
		}
	}
	fmt.Fprintf(o.Out, "result: %d of %d task(s) passed\n", len(tasks)-failed, len(tasks))
	if failed > 0 {
		return exitCode(engine.ExitWorkLeft, errSilent)
	}
	return nil
}
