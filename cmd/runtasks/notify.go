package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/notify"
	"github.com/runtasks/runtasks/internal/trust"
)

// notifyRunCommand is the hidden command the stop hook starts, detached,
// to run workflow.notify: it reads a job on stdin, runs its commands and
// logs how each ended, so the hook never waits for them.
const notifyRunCommand = "notify-run"

type notifyRunOptions struct{ *Factory }

func newNotifyRunCmd(f *Factory) *cobra.Command {
	o := &notifyRunOptions{Factory: f}
	return &cobra.Command{
		Use:    notifyRunCommand,
		Short:  "Run workflow.notify's commands for one event (started by the stop hook)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, args []string) error { return runNotifyRun(cmd.Context(), o) },
	}
}

func runNotifyRun(ctx context.Context, o *notifyRunOptions) error {
	job, err := notify.ReadJob(o.In)
	if err != nil {
		return exitCode(engine.ExitUsage, err)
	}
	if err := notify.Log(job, notify.Run(ctx, job, o.Environ())); err != nil {
		fmt.Fprintf(o.Err, "runtasks notify-run: %v\n", err)
	}
	return nil
}

// notifySender starts workflow.notify's commands for a decision, detached,
// when their source is the person's: the environment, a flag, the file
// --config names, or the project.yaml read (cfg.File) when trusted says so.
func notifySender(f *Factory, cmd *cobra.Command, cfg *config.Config, src *config.Sources,
	trusted func() bool) func(engine.Input, engine.Decision) (event string, err error) {
	explicit, _ := cmd.Flags().GetString("config")
	gate := notify.FromTrustedSource(explicit, func(file string) bool { return file != "" && file == cfg.File && trusted() })
	return func(in engine.Input, dec engine.Decision) (string, error) {
		return notify.Send(cfg, src, gate, in, dec, f.Now(), selfPath, []string{notifyRunCommand}, f.Environ())
	}
}

// notifyPort is the engine's notify port: notifySender, logging what was
// dispatched, or why not.
func notifyPort(f *Factory, cmd *cobra.Command, cfg *config.Config, src *config.Sources, trusted func() bool,
	logger *log.Logger) func(engine.Input, engine.Decision) {
	send := notifySender(f, cmd, cfg, src, trusted)
	return func(in engine.Input, dec engine.Decision) {
		event, err := send(in, dec)
		if err != nil {
			logger.Warn("notify", "session", in.SessionID, "epic", dec.Epic, "outcome", dec.Outcome, "err", err)
		} else if event != "" {
			logger.Info("notify dispatched", "session", in.SessionID, "epic", dec.Epic, "event", event)
		}
	}
}

// projectTrusted: for a command a person typed (runtasks run), the
// project's project.yaml may run commands when it is trusted as it is now.
func projectTrusted(f *Factory, cfg *config.Config) func() bool {
	return func() bool {
		st, err := f.trustStore()
		if err != nil {
			return false
		}
		ok, err := st.CheckFile(cfg.Root, cfg.File)
		return err == nil && ok == trust.Trusted
	}
}

// selfPath is the runtasks binary to start again: argv[0] (looked up on
// PATH when bare), else the executable.
func selfPath() (string, error) {
	if a := os.Args[0]; strings.ContainsRune(a, filepath.Separator) {
		return filepath.Abs(a)
	} else if p, err := exec.LookPath(a); err == nil {
		return p, nil
	}
	return os.Executable()
}
