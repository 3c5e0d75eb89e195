package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// LoadTrustedConfig loads the configuration for a command that must not
// run, or take a value from, a project.yaml the person has not trusted
// (doctor, install, uninstall, status, report, prompt, reset, codex
// monitor): as LoadHookConfig does; an untrusted or changed file is left
// out and said on stderr.
func (f *Factory) LoadTrustedConfig(cmd *cobra.Command, startDir string) (*config.Config, *config.Sources, error) {
	cfg, src, err := f.LoadHookConfig(cmd, startDir)
	if err == nil && cfg.Untrusted != nil {
		f.warn(cfg.Untrusted.Message())
	}
	return cfg, src, err
}

// brokenTrust is a trust store that cannot be read: nothing is trusted.
func brokenTrust(err error) func(string, []byte) (trust.State, error) {
	return func(string, []byte) (trust.State, error) { return trust.Untrusted, err }
}

// LoadHookConfig loads the configuration for a hook command (stop-hook,
// prompt-hook, session-hook): as LoadConfig does, except that a
// project.yaml is read only when the user trusts it as it is now
// (runtasks trust); otherwise cfg.Untrusted says what was left out. A file
// named by --config or RUNTASKS_CONFIG is read as named.
func (f *Factory) LoadHookConfig(cmd *cobra.Command, startDir string) (*config.Config, *config.Sources, error) {
	opts, err := f.loadOptions(cmd, startDir)
	if err != nil {
		return nil, nil, err
	}
	if st, err := f.trustStore(); err != nil {
		opts.RequireTrust = brokenTrust(err)
	} else {
		opts.RequireTrust = st.Check
	}
	return config.Load(opts)
}

// confirmTrust shows what root's project.yaml (data, read from file) would
// make runtasks run, then gets the person's informed yes: given by flag
// (--yes, install's --trust), else asked on a terminal. Without it the
// error says what to do; nothing is trusted.
func (f *Factory) confirmTrust(root, file string, data []byte, yes bool, flag string) error {
	execs, err := config.Review(root, data)
	fmt.Fprint(f.Out, config.ReviewText(file, execs, err))
	if yes {
		return nil
	}
	if f.Interactive == nil || !f.Interactive() {
		return exitCode(engine.ExitUsage, fmt.Errorf("%s is not trusted: review it (the list above), then run again with %s", file, flag))
	}
	fmt.Fprintf(f.Err, "Trust %s, so that runtasks' hooks read this project.yaml? [y/N] ", root)
	line, _ := bufio.NewReader(f.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return exitCode(engine.ExitUsage, errors.New(file+" is not trusted (the answer was no)"))
	}
	return nil
}

// trustOptions are trust's and untrust's: the trust records and the
// project named.
type trustOptions struct {
	*Factory
	Yes        bool
	st         *trust.Store
	root, file string
}

// target finds the trust records and the project a trust or untrust
// command names: DIR (or the working directory) resolved as the hooks
// resolve their cwd, except that RUNTASKS_CONFIG is not followed, and
// CLAUDE_PROJECT_DIR only when no DIR is given.
func (o *trustOptions) target(_ *cobra.Command, args []string) (err error) {
	if o.st, err = o.trustStore(); err != nil {
		return err
	}
	dir := ""
	if len(args) > 0 {
		dir = args[0]
	} else if dir, err = o.Getwd(); err != nil {
		return err
	}
	env := slices.DeleteFunc(slices.Clone(o.Environ()), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == config.EnvConfig || (len(args) > 0 && name == config.EnvProjectDir)
	})
	o.root, o.file, err = config.FindProject(config.LoadOptions{StartDir: dir, Environ: env, MainWorktree: mainWorktree})
	return err
}

func newTrustCmd(f *Factory) *cobra.Command {
	o := &trustOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Let runtasks read this project's project.yaml",
		Long: `trust shows what the project's project.yaml would make runtasks run —
beads.bin, command checks, notify commands, runtasks run's agent binaries —
and the paths outside the project it names, then asks (on a terminal; --yes
otherwise). On yes it records the project's root (DIR or the working
directory, resolved as the hooks resolve theirs: the main work tree of its
git repository) and the sha256 of its project.yaml in
$XDG_CONFIG_HOME/runtasks/trusted/ (else ~/.config/runtasks/trusted/).

A project.yaml can name programs to run, so runtasks reads it only when it
is trusted and unchanged since: the hook commands (stop-hook, prompt-hook,
session-hook, run on the agent's events without anyone typing them) and the
commands that look or set up (doctor, install, uninstall, status, report,
prompt, reset, codex monitor) ignore an untrusted or changed file and say
so. Commands you type to work the epic (run, check, claim, arm, disarm) read
it as make reads a Makefile; config show and validate read it to show it.
Trust again after each change. A project without project.yaml needs no
trust; install trusts the project.yaml it writes itself.`,
		Example: `  runtasks trust
  runtasks trust --yes ~/src/app
  runtasks untrust ~/src/app`,
		Args:    cobra.MaximumNArgs(1),
		PreRunE: o.target,
		RunE:    func(cmd *cobra.Command, args []string) error { return runTrust(o) },
	}
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "trust without asking (after reviewing what the file runs)")
	setExitStatus(cmd, `  0  trusted (or already trusted as it is; or nothing to trust: the project
     has no project.yaml)
  1  failed: the project or the trust record could not be read or written
  4  not trusted: no --yes where nobody can be asked, or the answer was no`)
	return cmd
}

func newUntrustCmd(f *Factory) *cobra.Command {
	o := &trustOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "untrust [DIR]",
		Short: "Stop runtasks reading this project's project.yaml",
		Long: `untrust removes the trust record of the project at DIR (or the working
directory): from then on runtasks ignores its project.yaml where it needs
trust until it is trusted again (runtasks trust).`,
		Example: `  runtasks untrust
  runtasks untrust ~/src/app`,
		Args:    cobra.MaximumNArgs(1),
		PreRunE: o.target,
		RunE:    func(cmd *cobra.Command, args []string) error { return runUntrust(o) },
	}
	setExitStatus(cmd, `  0  untrusted (or it was not trusted)
  1  failed: the trust record could not be removed`)
	return cmd
}

func runUntrust(o *trustOptions) error {
	removed, err := o.st.Untrust(o.root)
	switch {
	case err != nil:
		return exitCode(engine.ExitFailed, err)
	case removed:
		fmt.Fprintf(o.Out, "untrusted %s: runtasks ignores its %s where it needs trust\n", o.root, config.ProjectFile)
	default:
		fmt.Fprintf(o.Out, "%s was not trusted\n", o.root)
	}
	return nil
}

func runTrust(o *trustOptions) error {
	if o.file == "" {
		fmt.Fprintf(o.Out, "%s has no %s: nothing to trust (the hooks need no trust without one)\n", o.root, config.ProjectFile)
		return nil
	}
	data, err := agentfile.Read(o.file, agentfile.MaxText)
	if err != nil {
		return fmt.Errorf("read %s: %w", o.file, err)
	}
	if state, err := o.st.Check(o.root, data); err == nil && state == trust.Trusted {
		fmt.Fprintf(o.Out, "%s is trusted already (%s as it is now)\n", o.root, o.file)
		return nil
	}
	if err := o.confirmTrust(o.root, o.file, data, o.Yes, "--yes"); err != nil {
		return err
	}
	if _, err := o.st.Trust(o.root, o.file, data, o.Now()); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "trusted %s (%s as it is now)\n", o.root, o.file)
	if err := config.ValidateYAML(o.file, data); err != nil {
		fmt.Fprintf(o.Out, "note: %s has problems the hooks will report:\n%s\n", o.file, err)
	}
	return nil
}

// findProject finds the project as every command does
// (config.FindProject): cmd's --config (nil: RUNTASKS_CONFIG), or from dir
// ("" = the working directory), one project per git repository.
func (f *Factory) findProject(cmd *cobra.Command, dir string) (root, file string, err error) {
	opts, err := f.loadOptions(cmd, dir)
	if err != nil {
		return "", "", err
	}
	return config.FindProject(opts)
}
