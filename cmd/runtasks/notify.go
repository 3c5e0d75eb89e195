package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/notify"
)

// notifyRunCommand is the hidden command the stop hook starts, detached,
// to run workflow.notify.
const notifyRunCommand = "notify-run"

// newNotifyRunCmd is `runtasks notify-run` (hidden): it reads a notify job
// on stdin, runs its commands (each in its own process group, within its
// timeout) and appends how each ended to the job's log. It is started by
// the stop hook in a session of its own, so the hook never waits for it.
func newNotifyRunCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    notifyRunCommand,
		Short:  "Run workflow.notify's commands for one event (started by the stop hook)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := notify.ReadJob(f.In)
			if err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			outcomes := notify.Run(cmd.Context(), job, f.Environ())
			if err := notify.Log(job, outcomes); err != nil {
				fmt.Fprintf(f.Err, "runtasks notify-run: %v\n", err)
			}
			return nil
		},
	}
}

// hookFileTrusted says whether a configuration file in a hook's
// configuration may run commands: the hooks read a project.yaml only when
// it is trusted and unchanged since (Factory.LoadHookConfig), so the file
// the configuration was read from is, and no other.
func hookFileTrusted(cfg *config.Config) func(file string) bool {
	return func(file string) bool { return cfg.Untrusted == nil && cfg.File != "" && file == cfg.File }
}

// selfPath is the runtasks binary to start again: argv[0] as it was run
// (looked up on PATH when it is a bare name), else the executable.
func selfPath() (string, error) {
	if a := os.Args[0]; strings.ContainsRune(a, filepath.Separator) {
		return filepath.Abs(a)
	} else if p, err := exec.LookPath(a); err == nil {
		return p, nil
	}
	return os.Executable()
}
