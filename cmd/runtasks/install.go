package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/install"
)

type installCmdOptions struct {
	Out, Err io.Writer
	Opts     install.Options
	// NoTrust skips Codex's trust step.
	NoTrust bool
}

func newInstallCmd(f *Factory) *cobra.Command {
	o := &installCmdOptions{}
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
tell the agent from their input), each with the absolute path of this runtasks binary (or --bin), so that doctor
can check the entries.

The file is edited in place, not rewritten: comments, key order,
indentation and every hook you wrote stay byte for byte (even one that runs
runtasks). What install adds is recorded in ~/.local/state/runtasks/install
($XDG_STATE_HOME), and only that is ever changed again: a second install
with other flags updates runtasks' own entries where they stand; running it
twice changes nothing; uninstall gives the file back byte for byte. A
symlinked file is written through (the link stays). A value of the wrong
shape, invalid JSON or a read-only file is refused with the file, line and
key, and nothing is changed. Before the file changes, its old content is
saved next to it as FILE.runtasks.bak (one backup, the newest).
--dry-run prints the diff and writes nothing.

It also writes the skills (/run-tasks, completion-checklist) where the agent
reads them, and, for a project, project.yaml when there is none; these stay
while any agent's install uses them. A project install trusts the project
(runtasks trust); --global trusts none. The stop hook's timeout covers the
configured command checks (at least 30s).

Codex skips hooks until they are trusted. When codex is on PATH, install
trusts runtasks' hooks through "codex app-server" (hooks/list, then
config/batchWrite of each hook's trusted_hash); otherwise it prints what to
do. Codex reads a project's .codex/hooks.json only in a trusted project.`,
		Example: `  # this project, Claude Code, driving one epic
  runtasks install claude --epic bd-x7y8

  # see what would change
  runtasks install codex --dry-run

  # every project of this user
  runtasks install gemini --global`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: hook.Agents,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := installOptions(f, cmd, args[0], &o.Opts); err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			o.Out, o.Err = f.Out, f.Err
			if o.Opts.Agent == hook.Codex && !o.NoTrust && !o.Opts.DryRun {
				if bin := lookPathIn(f.Getenv("PATH"), "codex"); bin != "" {
					env := f.Environ()
					o.Opts.Trust = install.CodexTrust{Bin: bin, Env: env, Dir: o.Opts.ProjectDir}.Trust
				}
			}
			res, err := install.Install(cmd.Context(), o.Opts)
			printInstallResult(o.Out, "install", o.Opts, res)
			if err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			if err := installTrust(f, o.Out, o.Opts); err != nil {
				return exitCode(1, err)
			}
			return nil
		},
	}
	installFlags(cmd, &o.Opts)
	cmd.Flags().StringVar(&o.Opts.Epic, "epic", "", "epic the Stop hook drives (written as --epic; default: RUNTASKS_EPIC or project.yaml at run time)")
	cmd.Flags().BoolVar(&o.NoTrust, "no-trust", false, "codex: do not trust the hooks through codex app-server")
	setExitStatus(cmd, `  0  installed (or nothing to change; or the dry run's diff printed)
  4  usage or setup error: unknown agent; a settings file that is
     unreadable, invalid, of the wrong shape, read-only or unwritable
     (left as it was)`)
	return cmd
}

// installFlags adds the flags install and uninstall share.
func installFlags(cmd *cobra.Command, o *install.Options) {
	cmd.Flags().BoolVar(&o.Global, "global", false, "the user's settings (home directory) instead of the project's")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the diff, write nothing")
	cmd.Flags().String("bin", "", "runtasks binary the hooks run (default: this binary)")
}

// installOptions fills the options both commands take from the factory.
func installOptions(f *Factory, cmd *cobra.Command, agent string, o *install.Options) error {
	if !hook.Known(agent) {
		return fmt.Errorf("unknown agent %q: want %s", agent, strings.Join(hook.Agents, ", "))
	}
	o.Agent = agent
	o.Home = f.Getenv("HOME")
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	if s := f.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		o.ManifestDir = filepath.Join(s, "runtasks", "install")
	}
	o.CodexHome = f.Getenv("CODEX_HOME")
	bin, _ := cmd.Flags().GetString("bin")
	if bin == "" {
		exe, err := f.Executable()
		if err != nil {
			return fmt.Errorf("path of this runtasks binary: %w (give --bin)", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		bin = exe
	}
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	o.Executable = bin
	wd, err := f.Getwd()
	if err != nil {
		return err
	}
	configFile, _ := cmd.Flags().GetString("config")
	root, _, err := f.findProject(configFile, wd)
	if err != nil {
		return err
	}
	o.ProjectDir = root
	// Cursor's own loop_limit follows max_cycles; a configuration that does
	// not load leaves it unlimited (runtasks' cap applies at run time). The
	// stop hook's timeout covers the configured command checks.
	if cfg, _, err := f.LoadConfig(cmd, wd); err == nil {
		o.LoopLimit = cfg.Workflow.StopHook.MaxCycles
		o.StopTimeout = hookTimeoutFor(cfg)
	} else {
		o.StopTimeout = hookTimeoutFor(nil)
	}
	return nil
}

// installTrust trusts the project install wrote into (runtasks trust):
// the person who installs runtasks into a project vouches for its
// project.yaml as it is now. A global install trusts nothing: it is not
// about one project.
func installTrust(f *Factory, w io.Writer, o install.Options) error {
	if o.Global || o.DryRun {
		return nil
	}
	file := filepath.Join(o.ProjectDir, config.ProjectFile)
	if _, err := os.Stat(file); err != nil {
		return nil
	}
	st, err := f.trustStore()
	if err != nil {
		return err
	}
	if _, err := trustFile(st, o.ProjectDir, file, f.Now()); err != nil {
		return err
	}
	fmt.Fprintf(w, "trusted %s: the hooks read its %s as it is now (run `runtasks trust` again after changing it)\n", o.ProjectDir, config.ProjectFile)
	return nil
}

func printInstallResult(w io.Writer, verb string, o install.Options, res *install.Result) {
	if res == nil {
		return
	}
	if o.DryRun {
		for _, fc := range res.Files {
			if fc.Diff != "" {
				fmt.Fprint(w, fc.Diff)
			}
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
