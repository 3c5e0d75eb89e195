package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/shell"
	"github.com/runtasks/runtasks/internal/state"
)

// Factory holds what commands take from the outside world, so that every
// command runs in tests without a process.
type Factory struct {
	In       io.Reader
	Out, Err io.Writer
	Environ  func() []string
	Getwd    func() (string, error)
	Now      func() time.Time
	// Executable is the path of the running runtasks binary.
	Executable func() (string, error)
	// Interactive reports whether a person can be asked (stdin is a
	// terminal); nil: nobody can.
	Interactive func() bool
}

func newSystemFactory() *Factory {
	return &Factory{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Environ:    os.Environ,
		Getwd:      os.Getwd,
		Now:        time.Now,
		Executable: os.Executable,
		Interactive: func() bool {
			return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd()))
		},
	}
}

// Getenv reads one variable from the factory's environment.
func (f *Factory) Getenv(key string) string {
	return config.LookupEnv(f.Environ(), key)
}

// home is $HOME, else the user's home directory.
func (f *Factory) home() string {
	h, _ := os.UserHomeDir()
	return cmp.Or(f.Getenv("HOME"), h)
}

// executable is the running binary's path, symlinks resolved ("" on error).
func (f *Factory) executable() (string, error) {
	exe, err := f.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}

// newBeadsClient is the bd client a configuration describes, in the
// factory's environment.
func newBeadsClient(f *Factory, cfg *config.Config) *beads.Client {
	env := f.Environ()
	return &beads.Client{Bin: cfg.Beads.Bin, Dir: cfg.BeadsDir(), WorkDir: cfg.Root, Timeout: cfg.Beads.Timeout, Env: env,
		Slots: &beads.Slots{Dir: beads.SlotsDir(env), Max: cfg.Beads.MaxProcesses, Wait: cfg.Beads.QueueTimeout},
		Links: &state.Store{Dir: cfg.StateDir()}}
}

// stopPorts are the engine's ports for a configuration: bd, git, the shell
// for command checks, and the clock in UTC, as decisions are stored.
func stopPorts(f *Factory, cfg *config.Config) engine.Ports {
	bd := newBeadsClient(f, cfg)
	repo := git.Repo{Dir: cfg.Root}
	return engine.Ports{Beads: bd, Uncommitted: repo.Uncommitted, Worktrees: repo.Worktrees, Updater: bd,
		Runner: shell.Runner{Env: f.Environ()}.Run, Now: func() time.Time { return f.Now().UTC() }}
}

// LoadConfig loads the layered configuration for a command. startDir is
// where the project root search begins ("" = working directory); flags are
// the command's flags (only changed ones override).
func (f *Factory) LoadConfig(cmd *cobra.Command, startDir string) (*config.Config, *config.Sources, error) {
	opts, err := f.loadOptions(cmd, startDir)
	if err != nil {
		return nil, nil, err
	}
	return config.Load(opts)
}

// loadConfig is a PreRunE that loads the configuration with load (a
// Factory's LoadConfig or LoadTrustedConfig) into *cfg; an error ends the
// command with status code.
func loadConfig(load func(*cobra.Command, string) (*config.Config, *config.Sources, error), cfg **config.Config, code int) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) (err error) {
		if *cfg, _, err = load(cmd, ""); err != nil {
			return exitCode(code, err)
		}
		return nil
	}
}

// loadOptions are the LoadOptions every command shares: one project per
// repository, RUNTASKS_ typos as warnings.
func (f *Factory) loadOptions(cmd *cobra.Command, startDir string) (config.LoadOptions, error) {
	opts := config.LoadOptions{StartDir: startDir, Environ: f.Environ(), MainWorktree: mainWorktree, Warn: f.warn}
	if opts.StartDir == "" {
		wd, err := f.Getwd()
		if err != nil {
			return opts, err
		}
		opts.StartDir = wd
	}
	if cmd != nil {
		opts.Flags = cmd.Flags()
		opts.ConfigFile, _ = opts.Flags.GetString("config")
	}
	return opts, nil
}

// printJSON writes v as indented JSON, a command's --json output.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ExitError carries a command's exit status to Main.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// exitCode wraps err (errSilent: nothing to print) with an exit status.
func exitCode(code int, err error) error { return &ExitError{Code: code, Err: err} }

// errSilent ends a command with status 1 after it has printed its own error.
var errSilent = errors.New("")

func newRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "runtasks",
		Short: "Keep a coding agent working until an epic's beads are done",
		Long: `runtasks sits in a coding agent's Stop hook. At every stop it asks beads (bd)
what is left under an epic; while work remains it blocks the stop and feeds
the agent one constant orchestration prompt. Exit control belongs to beads'
state: completion promises are claims, accepted only when beads agrees.`,
		Example: `  # register in .claude/settings.json:
  #   {"hooks":{"Stop":[{"hooks":[{"type":"command","command":"runtasks stop-hook --epic bd-x7y8","timeout":30}]}]}}
  runtasks status --epic bd-x7y8
  runtasks prompt --epic bd-x7y8
  runtasks install claude --epic bd-x7y8   # or codex, gemini, cursor
  runtasks run --epic bd-x7y8 --max-cycles 20
  runtasks check --epic bd-x7y8
  runtasks config show`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetIn(f.In)
	root.SetOut(f.Out)
	root.SetErr(f.Err)
	root.PersistentFlags().String("config", "", "project.yaml to read (default: RUNTASKS_CONFIG, else found from the working directory upwards)")
	root.PersistentFlags().String("log-level", "", "log level: debug, info, warn, error")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitCode(engine.ExitUsage, err) })
	root.SetUsageTemplate(root.UsageTemplate() + exitStatusTemplate)
	root.AddGroup(&cobra.Group{ID: groupCommands, Title: "Commands:"},
		&cobra.Group{ID: groupHooks, Title: "Hook plumbing (run by the agent's hooks, not typed):"})
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add(groupCommands, newInstallCmd(f), newUninstallCmd(f), newTrustCmd(f), newUntrustCmd(f), newArmCmd(f), newDisarmCmd(f),
		newClaimCmd(f), newRunCmd(f), newStatusCmd(f), newReportCmd(f), newCheckCmd(f), newVerifyCmd(f), newResetCmd(f), newPromptCmd(f),
		newConfigCmd(f), newDoctorCmd(f), newCodexCmd(f), newVersionCmd(f))
	add(groupHooks, newStopHookCmd(f), newPromptHookCmd(f), newSessionHookCmd(f), newPreToolHookCmd(f), newNotifyRunCmd(f))
	registerCompletions(f, root)
	root.SetHelpCommandGroupID(groupCommands)
	root.SetCompletionCommandGroupID(groupCommands)
	setExitStatus(root, `  0    success; done (the epic is complete, every check passed)
  1    failed: runtasks, bd or the agent failed while running
  2    work left: a stop would be blocked, a check is incomplete, a limit
       was reached with work left, or the task is someone else's
  3    needs a person: only blocked work remains, no progress, nothing to
       judge, or no such issue
  4    usage or setup error: bad flags or configuration, bd or a check
       cannot run, an id of the wrong kind
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP): what runtasks started was stopped
Each command's --help lists the statuses it uses; hook commands always exit 0.`)
	return root
}

// Main runs runtasks with args and returns its exit status. SIGINT,
// SIGTERM (an agent's hook timeout, a CI cancel) and SIGHUP (a closed
// terminal) cancel the command's context: a command stops as at Ctrl-C,
// and what it started is stopped with it.
func Main(args []string, f *Factory) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return execute(ctx, args, f)
}

// execute runs the command args name under ctx and returns its exit status.
func execute(ctx context.Context, args []string, f *Factory) int {
	root := newRootCmd(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	code := engine.ExitFailed
	if ee := (*ExitError)(nil); errors.As(err, &ee) {
		code, err = ee.Code, ee.Err
	} else if strings.HasPrefix(err.Error(), "unknown command") || cmd.ValidateArgs(cmd.Flags().Args()) != nil {
		// Bad arguments are usage errors, in every command: the command
		// did not run when its arguments do not validate.
		code = engine.ExitUsage
	}
	if err.Error() != "" {
		fmt.Fprintln(f.Err, "runtasks:", err)
	}
	return code
}
