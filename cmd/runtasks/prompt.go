package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/engine"
)

func newPromptCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the rendered orchestration prompt",
		Long: `prompt prints the orchestration prompt that stop-hook feeds the agent at
every block: the embedded prompts/run-tasks.md, or the file named by
prompts.run_tasks in project.yaml, with {epic_id} filled in.`,
		Example: `  runtasks prompt --epic bd-x7y8
  runtasks prompt --epic bd-x7y8 > .claude/commands/run-tasks-prompt.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := f.LoadTrustedConfig(cmd, "")
			if err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			if cfg.Workflow.Epic == "" {
				return exitCode(engine.ExitUsage, errors.New("no epic: pass --epic, set RUNTASKS_EPIC or workflow.epic"))
			}
			text, err := engine.RenderPrompt(cfg, cfg.Workflow.Epic, "")
			if err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			_, err = fmt.Fprintln(f.Out, text)
			return err
		},
	}
	cmd.Flags().String("epic", "", "epic id (env RUNTASKS_EPIC, workflow.epic)")
	setExitStatus(cmd, `  0  printed
  4  usage or setup error: no epic, bad configuration, a broken template`)
	return cmd
}
