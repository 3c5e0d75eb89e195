package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks"
	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/doctor"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/install"
	"github.com/runtasks/runtasks/internal/trust"
)

// installOptions are install's and uninstall's.
type installOptions struct {
	*Factory
	Opts     install.Options
	NoTrust  bool   // --no-trust
	TrustYes bool   // --trust
	Bin      string // --bin: install's only
	// cmd's flags name the configuration, loaded after the trust step.
	cmd *cobra.Command
}

func newInstallCmd(f *Factory) *cobra.Command {
	o := &installOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "install claude|codex|gemini|cursor",
		Short: "Register runtasks' hooks and skills with an agent",
		Long: `install merges runtasks' hooks into the agent's settings file:

  agent   file (project; --global)                          events
  claude  .claude/settings.json; ~/.claude/settings.json    Stop, SubagentStop, UserPromptSubmit, SessionStart
  codex   .codex/hooks.json; $CODEX_HOME/hooks.json         Stop, UserPromptSubmit, SessionStart
  gemini  .gemini/settings.json; ~/.gemini/settings.json    AfterAgent, BeforeAgent, SessionStart
  cursor  .cursor/hooks.json; ~/.cursor/hooks.json          stop, beforeSubmitPrompt, sessionStart

The Stop hook runs "runtasks stop-hook --agent AGENT [--epic E]", the prompt
hook "runtasks prompt-hook", the session hook "runtasks session-hook" (both
tell the agent from their input). A project's settings are committed and
shared, so its hooks run plain "runtasks", found on the PATH the agent
starts with: the same file works on every teammate's machine. The user's
settings (--global) name this binary's absolute path (or --bin), which only
that machine has. Entries an install wrote on another machine (any path to
runtasks or runtasks-hook, another --epic) are replaced where they stand:
install never adds a second set.

The file is edited in place, not rewritten: comments, key order,
indentation and every hook you wrote stay byte for byte (even one that runs
runtasks with flags of its own). What install adds is recorded in
~/.local/state/runtasks/install ($XDG_STATE_HOME), and only that is ever
changed again: a second install with other flags updates runtasks' own
entries where they stand; running it twice changes nothing; uninstall gives
the file back byte for byte. A symlinked file is written through (the link
stays). A value of the wrong shape, invalid JSON or a read-only file is
refused with the file, line and key, and nothing is changed. Before the file
changes, its old content is saved in the install records' backups/
directory (one backup, the newest; never in the project's work tree).
--dry-run prints the diff and writes nothing.

It also writes the skills (/run-tasks, completion-checklist) where the agent
reads them, and, for a project, project.yaml when there is none; these stay
while any agent's install uses them. install trusts, without asking, only
the project.yaml it writes itself (runtasks' commented example). A
project.yaml it did not write, or one changed since it was trusted, is
shown first — what it would make runtasks run — and trusted only on a yes:
asked on a terminal, --trust otherwise; without it install refuses and
writes nothing. --dry-run shows it too. --global trusts nothing and reads no
project.yaml. The stop hook's timeout covers the configured command checks
(at least 30s).

Codex skips hooks until they are trusted. When codex is on PATH, install
trusts runtasks' hooks through "codex app-server" (hooks/list, then
config/batchWrite of each hook's trusted_hash); otherwise it prints what to
do. Codex reads a project's .codex/hooks.json only in a trusted project.`,
		Example: `  # this project, Claude Code, driving one epic
  runtasks install claude --epic bd-x7y8

  # see what would change
  runtasks install codex --dry-run

  # a cloned project with its own project.yaml, installed from a script
  runtasks install claude --trust

  # every project of this user
  runtasks install gemini --global`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: hook.Agents,
		PreRunE:   o.fill,
		RunE:      func(cmd *cobra.Command, args []string) error { return runInstall(cmd.Context(), o) },
	}
	installFlags(cmd, &o.Opts)
	cmd.Flags().StringVar(&o.Bin, "bin", "", "with --global: the runtasks binary the user's hooks run (default: this binary)")
	cmd.Flags().StringVar(&o.Opts.Epic, "epic", "", "epic the Stop hook drives (written as --epic; default: RUNTASKS_EPIC or project.yaml at run time)")
	cmd.Flags().BoolVar(&o.NoTrust, "no-trust", false, "codex: do not trust the hooks through codex app-server")
	cmd.Flags().BoolVar(&o.TrustYes, "trust", false, "trust the project's project.yaml without asking (it is shown first)")
	setExitStatus(cmd, `  0  installed (or nothing to change; or the dry run's diff printed)
  1  the trust record could not be read or written
  4  usage or setup error: unknown agent; --bin without --global; a settings
     file that is unreadable, invalid, of the wrong shape, read-only or
     unwritable (left as it was); a project.yaml not trusted (no --trust
     where nobody can be asked, or the answer was no): nothing written`)
	return cmd
}

// runInstall trusts (or refuses) the project's project.yaml, then installs.
func runInstall(ctx context.Context, o *installOptions) error {
	if !o.Opts.Global {
		if err := projectTrust(o, nil); err != nil {
			return err
		}
	}
	// Cursor's loop_limit follows max_cycles, the stop hook's timeout covers
	// the command checks. A project's project.yaml counts only when trusted
	// (projectTrust has asked by now); the user's settings (--global) are
	// not one project's, and take no value from any project.yaml. A
	// configuration that does not load leaves Cursor unlimited (runtasks'
	// cap applies at run time).
	var cfg *config.Config // nil: it does not load
	if o.Opts.Global {
		cfg, _, _ = config.Load(config.LoadOptions{StartDir: o.Opts.Home, Environ: o.Environ(), RequireTrust: brokenTrust(nil)})
	} else {
		cfg, _, _ = o.LoadHookConfig(o.cmd, "")
	}
	if cfg != nil {
		o.Opts.LoopLimit = cfg.Workflow.StopHook.MaxCycles
	}
	o.Opts.StopTimeout = doctor.HookTimeout(cfg)
	if o.Opts.Agent == hook.Codex && !o.NoTrust && !o.Opts.DryRun {
		if bin := lookPathIn(o.Getenv("PATH"), "codex"); bin != "" {
			o.Opts.Trust = install.CodexTrust{Bin: bin, Env: o.Environ(), Dir: o.Opts.ProjectDir}.Trust
		}
	}
	res, err := install.Install(ctx, o.Opts)
	printInstallResult(o.Out, "install", o.Opts, res)
	if err != nil {
		return exitCode(engine.ExitUsage, err)
	}
	if !o.Opts.Global {
		// Say when the runtasks the project's hooks will run (the one on
		// PATH) is missing or is not this one.
		exe, _ := o.executable()
		onPath := lookPathIn(o.Getenv("PATH"), install.Bare)
		if r, err := filepath.EvalSymlinks(onPath); err == nil {
			onPath = r
		}
		switch {
		case onPath == "":
			fmt.Fprintf(o.Out, "note: runtasks is not on PATH here: the project's hooks run `runtasks` from the PATH the agent starts with; add %s to PATH, or install for this user with --global\n", filepath.Dir(exe))
		case exe != "" && onPath != exe:
			fmt.Fprintf(o.Out, "note: the project's hooks will run %s (runtasks on PATH), not this binary %s; `runtasks doctor` compares them\n", onPath, exe)
		}
		return projectTrust(o, res)
	}
	return nil
}

// installFlags adds the flags install and uninstall share.
func installFlags(cmd *cobra.Command, o *install.Options) {
	cmd.Flags().BoolVar(&o.Global, "global", false, "the user's settings (home directory) instead of the project's")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the diff, write nothing")
}

// fill fills the options both commands take from the factory and the
// agent named; a failure is a usage error.
func (o *installOptions) fill(cmd *cobra.Command, args []string) error {
	o.cmd = cmd
	if !hook.Known(args[0]) {
		return exitCode(engine.ExitUsage, fmt.Errorf("unknown agent %q: want %s", args[0], strings.Join(hook.Agents, ", ")))
	}
	o.Opts.Agent = args[0]
	o.Opts.Home = o.home()
	if s := o.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		o.Opts.ManifestDir = filepath.Join(s, "runtasks", "install")
	}
	o.Opts.CodexHome = o.Getenv("CODEX_HOME")
	bin := o.Bin
	switch {
	case bin != "" && !o.Opts.Global:
		return exitCode(engine.ExitUsage, fmt.Errorf("--bin %s: a project's settings are shared, so its hooks run runtasks from PATH; put %s on PATH, or give --bin with --global (the user's own settings)", bin, filepath.Dir(bin)))
	case bin == "":
		exe, err := o.executable()
		if err != nil && o.Opts.Global {
			return exitCode(engine.ExitUsage, fmt.Errorf("path of this runtasks binary: %w (give --bin)", err))
		}
		bin = exe
	}
	if abs, err := filepath.Abs(bin); err == nil && bin != "" {
		bin = abs
	}
	o.Opts.Executable = bin
	root, _, err := o.findProject(cmd, "")
	if err != nil {
		return exitCode(engine.ExitUsage, err)
	}
	o.Opts.ProjectDir = root
	return nil
}

// projectTrust gets a yes for the project's project.yaml before a project
// install writes anything (res nil). None yet: install writes runtasks'
// example, and this trusts it after the install (res: the file created).
// Trusted and unchanged, or runtasks' own example: nothing to ask. Any
// other: what it would run is shown and the person's yes taken (asked on a
// terminal, --trust otherwise); a dry run only shows it.
func projectTrust(o *installOptions, res *install.Result) error {
	root := o.Opts.ProjectDir
	file := filepath.Join(root, config.ProjectFile)
	written := res != nil && slices.ContainsFunc(res.Files, func(fc install.FileChange) bool { return fc.Path == file && fc.Action == install.Created })
	if res != nil && (o.Opts.DryRun || !written) {
		return nil
	}
	data, err := agentfile.Read(file, agentfile.MaxText)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	st, err := o.trustStore()
	if err != nil {
		return err
	}
	if state, err := st.Check(root, data); !written && err == nil && state == trust.Trusted {
		return nil
	}
	own := bytes.Equal(data, runtasks.ProjectYAMLExample)
	switch {
	case own && o.Opts.DryRun:
		fmt.Fprintf(o.Out, "%s is runtasks' own example: install would trust it\n", file)
		return nil
	case own:
	case o.Opts.DryRun:
		o.confirmTrust(root, file, data, true, "")
		fmt.Fprintf(o.Out, "install would ask before trusting %s (--trust: without asking); until then runtasks ignores it\n", file)
		return nil
	default:
		if err := o.confirmTrust(root, file, data, o.TrustYes, "--trust"); err != nil {
			return err
		}
	}
	if _, err := st.Trust(root, file, data, o.Now()); err != nil {
		return err
	}
	what := "its %s as it is now"
	if written {
		what = "the %s install wrote"
	}
	fmt.Fprintf(o.Out, "trusted %s: runtasks reads "+what+" (run `runtasks trust` again after changing it)\n", root, config.ProjectFile)
	return nil
}

func printInstallResult(w io.Writer, verb string, o install.Options, res *install.Result) {
	if res == nil {
		return
	}
	if o.DryRun {
		for _, fc := range res.Files {
			fmt.Fprint(w, fc.Diff)
		}
	}
	fmt.Fprintf(w, "%s %s: %s\n", verb, res.Agent, res.Settings)
	for _, fc := range res.Files {
		line := fmt.Sprintf("  %-9s %s", fc.Action, fc.Path)
		if fc.Backup != "" {
			line += " (backup " + fc.Backup + ")"
		}
		fmt.Fprintln(w, line)
	}
	if o.DryRun {
		fmt.Fprintln(w, "dry run: nothing written")
	} else if !res.Changed() {
		fmt.Fprintln(w, "nothing to change")
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// lookPathIn finds an executable named name in the PATH list path.
func lookPathIn(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
