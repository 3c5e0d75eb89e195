package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/doctor"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
)

type doctorOptions struct {
	*Factory
	in doctor.Inputs
}

func newDoctorCmd(f *Factory) *cobra.Command {
	o := &doctorOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that runtasks, bd, the project and the agents fit together",
		Long: `doctor runs its checks one after the other and prints one line for each:
ok, warning or error, and for problems the fix.

  bd          bd found, and its version (runtasks is tested with bd ` + doctor.TestedBD + `)
  store       the beads store found and readable
  epic        the configured epic exists (workflow.epic, RUNTASKS_EPIC, --epic);
              with none configured, each epic the installed stop hooks pass
              (runtasks install AGENT --epic E)
  server      where the store lives: embedded, or on a Dolt SQL server, and
              whether that server answers (docs/scale.md)
  config      project.yaml valid, and applied; an error when the
              environment makes the configuration invalid (naming the
              variable) or switches the stop hook off
  trust       whether runtasks reads project.yaml: trusted, untrusted, or
              changed since trusted (runtasks trust); for a file it does
              not read, what the file would make runtasks run (doctor runs
              none of it: bd is the default or the environment's)
  AGENT       for claude, codex, gemini and cursor: whether runtasks' hooks are
              installed (the project's settings, Claude Code's
              settings.local.json, the user's) and run this runtasks; an
              error when a hook's program is missing, is not runtasks (its
              Go build information, read from the file, names another main
              package than cmd/runtasks) or is another version or build of
              runtasks; when two runtasks stop hooks would both fire at one
              stop; and when the agent started here (below the project
              root) would not run the project's hooks (Claude Code, Gemini
              CLI)
  block-cap   Claude Code's cap on consecutive Stop-hook blocks
              (` + doctor.EnvBlockCap + `) against workflow.stop_hook.max_cycles
  timeout     each installed stop hook's timeout against what the command
              checks need (their timeouts in a row, plus 30 s for bd)
  state       the state directory is writable (creating it writes its
              .gitignore)
  runs        whether git tracks the runs folder (claim.runs_dir), ignores
              it, or shows it in git status: run folders are not meant to
              be committed

bd is asked at most three times (version, the epic, the server), one
query after the other. Each error's fix is a command or an edit that
removes it.`,
		Example: `  runtasks doctor
  runtasks doctor --epic bd-x7y8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			wd, err := f.Getwd()
			if err != nil {
				return exitCode(1, err)
			}
			in := &o.in
			if in.Root, _, _ = f.findProject(cmd, wd); in.Root == "" {
				in.Root = wd
			}
			// doctor runs nothing an untrusted project.yaml names: it reads
			// the configuration as the hooks do and says what the file
			// would have run.
			in.Cfg, in.Src, in.CfgErr = f.LoadHookConfig(cmd, wd)
			in.Wd = wd
			in.Environ, in.ReadFile = f.Environ(), func(p string) ([]byte, error) { return agentfile.Read(p, agentfile.MaxText) }
			in.Home, in.CodexHome = f.home(), f.Getenv("CODEX_HOME")
			in.Executable, _ = f.executable()
			in.LookPath = func(name string) string { return lookPathIn(f.Getenv("PATH"), name) }
			in.Beads = func(cfg *config.Config) doctor.Beads { return newBeadsClient(f, cfg) }
			if st, err := f.trustStore(); err != nil {
				in.TrustErr = err
			} else {
				in.TrustState = st.CheckFile
			}
			return runDoctor(cmd.Context(), o)
		},
	}
	cmd.Flags().String("epic", "", "epic to check (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, `  0  no check failed (warnings allowed)
  1  doctor itself could not run (no working directory)
  4  setup error: at least one check is an error (its fix is printed)`)
	return cmd
}

func runDoctor(ctx context.Context, o *doctorOptions) error {
	if doctor.Run(ctx, &o.in, func(d doctor.Finding) { fmt.Fprintln(o.Out, headless.Clean(d.String())) }) {
		return exitCode(engine.ExitUsage, errSilent)
	}
	return nil
}
