package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/trust"
)

// mainWorktree is config.LoadOptions.MainWorktree: git.MainWorktree,
// from the repository's files, else one git process (bounded there).
func mainWorktree(dir string) (string, bool, error) {
	return git.MainWorktree(context.Background(), dir)
}

// warn prints a problem that does not stop the command on stderr.
func (f *Factory) warn(msg string) { fmt.Fprintln(f.Err, "runtasks: warning:", msg) }

// trustStore is the user's trust records, from the factory's environment.
func (f *Factory) trustStore() (*trust.Store, error) {
	dir, err := trust.DefaultDir(f.Getenv)
	if err != nil {
		return nil, err
	}
	return &trust.Store{Dir: dir}, nil
}

// brokenTrust is a trust store that cannot be read: nothing is trusted.
type brokenTrust struct{ err error }

func (b brokenTrust) CheckSum(string, string) (trust.State, error) { return trust.Untrusted, b.err }

// LoadHookConfig loads the configuration for a hook command (stop-hook,
// prompt-hook, session-hook): as LoadConfig does, except that a
// project.yaml is read only when the user trusts it as it is now
// (runtasks trust); otherwise cfg.Untrusted says what was left out.
func (f *Factory) LoadHookConfig(cmd *cobra.Command, startDir string) (*config.Config, *config.Sources, error) {
	var checker config.TrustChecker
	if st, err := f.trustStore(); err != nil {
		checker = brokenTrust{err}
	} else {
		checker = st
	}
	opts := config.LoadOptions{
		StartDir:     startDir,
		Environ:      f.Environ(),
		MainWorktree: mainWorktree,
		RequireTrust: checker,
		Warn:         f.warn,
	}
	if opts.StartDir == "" {
		wd, err := f.Getwd()
		if err != nil {
			return nil, nil, err
		}
		opts.StartDir = wd
	}
	if cmd != nil {
		opts.Flags = cmd.Flags()
		opts.ConfigFile, _ = opts.Flags.GetString("config")
	}
	return config.Load(opts)
}

type trustOptions struct {
	Out   io.Writer
	Store *trust.Store
	// Root and File are the project and its project.yaml ("" = none).
	Root, File string
	Now        func() time.Time
}

// trustTarget finds the project a trust or untrust command names: DIR (or
// the working directory) resolved as the hooks resolve their cwd, except
// that RUNTASKS_CONFIG is not followed, and CLAUDE_PROJECT_DIR only when no
// DIR is given.
func trustTarget(f *Factory, args []string) (root, file string, err error) {
	dir := ""
	if len(args) > 0 {
		dir = args[0]
	} else if dir, err = f.Getwd(); err != nil {
		return "", "", err
	}
	var env []string
	for _, kv := range f.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == config.EnvConfig || (len(args) > 0 && name == config.EnvProjectDir) {
			continue
		}
		env = append(env, kv)
	}
	return config.FindProject(config.LoadOptions{StartDir: dir, Environ: env, MainWorktree: mainWorktree})
}

func newTrustCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Let the hooks read this project's project.yaml",
		Long: `trust records the project's root (DIR or the working directory, resolved
as the hooks resolve theirs: the main work tree of its git repository) and
the sha256 of its project.yaml in $XDG_CONFIG_HOME/runtasks/trusted/ (else
~/.config/runtasks/trusted/).

The hook commands (stop-hook, prompt-hook, session-hook) run on the agent's
events without anyone typing them, so they read a project.yaml only when it
is trusted and unchanged since: a project.yaml can name programs to run
(beads.bin, workflow.checks commands). An untrusted or changed file is
ignored by the hooks (defaults, environment and flags only) and they say so
in a systemMessage. Commands you type (check, run, status, config, …) read
it as always. Review the file, then trust it; trust it again after each
change. A project without project.yaml needs no trust.`,
		Example: `  runtasks trust
  runtasks trust ~/src/app
  runtasks untrust ~/src/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: trustRunE(f, runTrust),
	}
	setExitStatus(cmd, `  0  trusted (or nothing to trust: the project has no project.yaml)
  1  failed: the project or the trust record could not be read or written`)
	return cmd
}

func newUntrustCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "untrust [DIR]",
		Short: "Stop the hooks reading this project's project.yaml",
		Long: `untrust removes the trust record of the project at DIR (or the working
directory): from then on the hooks ignore its project.yaml until it is
trusted again (runtasks trust).`,
		Example: `  runtasks untrust
  runtasks untrust ~/src/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: trustRunE(f, runUntrust),
	}
	setExitStatus(cmd, `  0  untrusted (or it was not trusted)
  1  failed: the trust record could not be removed`)
	return cmd
}

// trustRunE wires trust and untrust: the same options, one action.
func trustRunE(f *Factory, run func(*trustOptions) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		o, err := trustCmdOptions(f, args)
		if err == nil {
			err = run(o)
		}
		if err != nil {
			return exitCode(engine.ExitFailed, err)
		}
		return nil
	}
}

func trustCmdOptions(f *Factory, args []string) (*trustOptions, error) {
	st, err := f.trustStore()
	if err != nil {
		return nil, err
	}
	root, file, err := trustTarget(f, args)
	if err != nil {
		return nil, err
	}
	return &trustOptions{Out: f.Out, Store: st, Root: root, File: file, Now: f.Now}, nil
}

func runTrust(o *trustOptions) error {
	if o.File == "" {
		fmt.Fprintf(o.Out, "%s has no %s: nothing to trust (the hooks need no trust without one)\n", o.Root, config.ProjectFile)
		return nil
	}
	_, err := trustFile(o.Store, o.Root, o.File, o.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "trusted %s (%s as it is now)\n", o.Root, o.File)
	if err := config.ValidateFile(o.File); err != nil {
		fmt.Fprintf(o.Out, "note: %s has problems the hooks will report:\n%s\n", o.File, err)
	}
	return nil
}

// trustFile trusts the project at root with its project.yaml as it is
// now (read as Load reads it).
func trustFile(st *trust.Store, root, file string, now time.Time) (trust.Record, error) {
	data, err := agentfile.Read(file, agentfile.MaxText)
	if err != nil {
		return trust.Record{}, fmt.Errorf("read %s: %w", file, err)
	}
	return st.Trust(root, file, data, now)
}

func runUntrust(o *trustOptions) error {
	removed, err := o.Store.Untrust(o.Root)
	if err != nil {
		return err
	}
	if removed {
		fmt.Fprintf(o.Out, "untrusted %s: the hooks ignore its %s\n", o.Root, config.ProjectFile)
	} else {
		fmt.Fprintf(o.Out, "%s was not trusted\n", o.Root)
	}
	return nil
}

// trustState describes the trust of a configuration's project for doctor:
// "" when there is nothing to trust.
func trustState(st *trust.Store, root, file string) (trust.State, error) {
	if file == "" {
		return trust.Trusted, nil
	}
	data, err := agentfile.Read(file, agentfile.MaxText)
	if err != nil {
		return trust.Untrusted, err
	}
	return st.Check(root, data)
}

// findProject finds the project as every command does
// (config.FindProject): configFile ("" = RUNTASKS_CONFIG) or from dir, one project
// per git repository.
func (f *Factory) findProject(configFile, dir string) (root, file string, err error) {
	return config.FindProject(config.LoadOptions{ConfigFile: configFile, StartDir: dir, Environ: f.Environ(), MainWorktree: mainWorktree})
}
