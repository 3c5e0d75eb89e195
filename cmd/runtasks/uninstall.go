package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/install"
)

func newUninstallCmd(f *Factory) *cobra.Command {
	o := &installOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "uninstall claude|codex|gemini|cursor",
		Short: "Remove runtasks' hooks and skills from an agent",
		Long: `uninstall removes exactly what install added and recorded: runtasks'
own hook entries (a hook you wrote stays, even one that runs runtasks; an
entry you edited since is yours; an entry of another machine's install that
install replaced is put back where it stood), the event lists, hooks object
or file that install created and that hold nothing else, and the file's
backup. The file is then byte for byte what it was before install, plus
whatever you changed since. The skills and project.yaml go
with the last agent's uninstall, when they are still as install wrote them.
--dry-run prints the diff.`,
		Example: `  runtasks uninstall claude
  runtasks uninstall codex --global --dry-run`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: hook.Agents,
		PreRunE:   o.fill,
		RunE:      func(cmd *cobra.Command, args []string) error { return runUninstall(cmd.Context(), o) },
	}
	installFlags(cmd, &o.Opts)
	setExitStatus(cmd, `  0  removed (or nothing to remove)
  4  usage or setup error: unknown agent; a settings file that is
     unreadable, invalid or unwritable (left as it was)`)
	return cmd
}

func runUninstall(ctx context.Context, o *installOptions) error {
	res, err := install.Uninstall(ctx, o.Opts)
	printInstallResult(o.Out, "uninstall", o.Opts, res)
	if err != nil {
		return exitCode(engine.ExitUsage, err)
	}
	return nil
}
