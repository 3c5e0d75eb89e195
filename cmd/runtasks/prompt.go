package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
)

type promptOptions struct {
	*Factory
	cfg *config.Config
}

func newPromptCmd(f *Factory) *cobra.Command {
	o := &promptOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the rendered orchestration prompt",
		Long: `prompt prints the orchestration prompt that stop-hook feeds the agent at
every block: the embedded prompts/run-tasks.md, or the file named by
prompts.run_tasks in project.yaml, with {epic_id} filled in.`,
		Example: `  runtasks prompt --epic bd-x7y8
  runtasks prompt --epic bd-x7y8 > .claude/commands/run-tasks-prompt.md`,
		Args:    cobra.NoArgs,
		PreRunE: loadConfig(f.LoadTrustedConfig, &o.cfg, engine.ExitUsage),
		RunE:    func(cmd *cobra.Command, args []string) error { return runPrompt(o) },
	}
	cmd.Flags().String("epic", "", "epic id (env RUNTASKS_EPIC, workflow.epic)")
	setExitStatus(cmd, `  0  printed
  4  usage or setup error: no epic, bad configuration, a broken template`)
	return cmd
}

func runPrompt(o *promptOptions) error {
	if o.cfg.Workflow.Epic == "" {
		return exitCode(engine.ExitUsage, errors.New("no epic: pass --epic, set RUNTASKS_EPIC or workflow.epic"))
	}
	text, err := engine.RenderPrompt(o.cfg, o.cfg.Workflow.Epic, "")
	if err != nil {
		return exitCode(engine.ExitUsage, err)
	}
	_, err = fmt.Fprintln(o.Out, text)
	return err
}
