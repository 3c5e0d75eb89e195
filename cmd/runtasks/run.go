package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
)

type runOptions struct {
	*Factory
	headless.Options        // its Out, Now and Environ are the factory's
	Agent, Session   string // override run.agent and run.session
	Plain            bool
	Workers          headless.WorkerOptions // --workers, --heartbeat, --allow-dirty
	// cmd's flags: --config, whether --workers was given.
	cmd *cobra.Command
	src *config.Sources
}

func newRunCmd(f *Factory) *cobra.Command {
	opts := &runOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "run --epic E [--agent claude|codex] [--max-cycles N] [--max-duration D] [-- agent args…]",
		Short: "Drive an epic headless: one fresh agent run per cycle until beads says done",
		Long: `run is the outer loop for CI, cron jobs and long epics: each cycle starts the
agent non-interactively and follows its event stream. Before the first cycle
and whenever the agent exits, the stop hook's engine decides with the input
a Stop gives it: promises, the cycle cap, max_duration, a checkpoint, the
budget, no-progress and bd errors apply as at a Stop, and workflow.notify
hears each event once. While it blocks, its block reason (the orchestration
prompt and its state line) is the next cycle's prompt.

  claude: claude -p --output-format stream-json --verbose [agent args] -- PROMPT
  codex:  codex exec --json [agent args] [resume SESSION_ID] -- PROMPT

With --workers N, N agent loops run in parallel, each cycle claiming one
ready task and working it in its own worktree on branch agent/<id>, merged
into the main work tree's branch (docs/scale.md). A main work tree with
changes to tracked files is refused unless --allow-dirty. A task whose
merge conflicts run.max_merge_failures times is blocked as needing a
person. The worktree and branch of a task closed and merged are removed;
--clean removes those earlier runs left.

The agent runs in a process group of its own: Ctrl-C, SIGTERM, SIGHUP or the
end of --max-duration send the group SIGINT, then SIGKILL after --grace (a
second Ctrl-C: at once); what it leaves running is stopped too. Progress
goes to stdout (a live line on a terminal). Each cycle's event stream and
stderr, and the run's record (run.json), are kept under
<state dir>/<run.dir>/<run id>/; a --run-id whose folder exists is refused.
Options come from project.yaml (run.*, workflow.stop_hook.max_cycles,
workflow.max_duration) and the flags below; see docs/run.md.`,
		Example: `  # work the epic with Claude Code, at most 20 agent runs
  runtasks run --epic bd-x7y8 --max-cycles 20 -- --permission-mode acceptEdits

  # Codex, continuing its session between cycles, for at most two hours
  runtasks run --epic bd-x7y8 --agent codex --session resume --max-duration 2h -- --full-auto

  # four agents in parallel, each task in its own worktree
  runtasks run --epic bd-x7y8 --workers 4 -- --permission-mode acceptEdits

  # remove the worktrees and branches of closed tasks that runs left behind
  runtasks run --clean

  # in CI: plain lines, exit status says what happened
  runtasks run --epic bd-x7y8 --plain; echo "exit $?"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return exitCode(engine.ExitUsage, fmt.Errorf("unexpected argument %q: agent arguments go after --", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, src, err := f.LoadConfig(cmd, "")
			if err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			opts.Options.Out, opts.Config, opts.cmd, opts.src = f.Out, cfg, cmd, src
			opts.Options.Environ, opts.Options.Now = f.Environ(), f.Now
			opts.Args = args
			opts.Beads = newBeadsClient(f, cfg)
			if clean, _ := cmd.Flags().GetBool("clean"); clean {
				return headless.RemoveLeftovers(cmd.Context(), cfg, opts.Beads, f.Out) // a failure is status 1
			}
			opts.Ports = stopPorts(f, cfg)
			opts.TTY = !opts.Plain && headless.IsTerminal(f.Out)
			opts.Width = func() int { return headless.Width(f.Out) }
			kill, stop := secondInterrupt()
			defer stop()
			opts.Kill = kill
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().String("epic", "", "epic to work (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "agent: claude or codex (run.agent)")
	cmd.Flags().StringVar(&opts.Session, "session", "", "fresh: a new session per cycle; resume: continue the Codex session (run.session)")
	cmd.Flags().Int("max-cycles", 0, "agent runs at most (workflow.stop_hook.max_cycles)")
	cmd.Flags().Duration("max-duration", 0, "stop after this long since the first cycle, e.g. 90m (workflow.max_duration; 0 = no limit)")
	cmd.Flags().DurationVar(&opts.Grace, "grace", 10*time.Second, "time the agent's processes have to exit after Ctrl-C before they are killed")
	cmd.Flags().BoolVar(&opts.Plain, "plain", false, "plain progress lines even on a terminal")
	cmd.Flags().StringVar(&opts.RunID, "run-id", "", "name of the run's folder (default: UTC time and a random suffix)")
	cmd.Flags().IntVar(&opts.Workers.N, "workers", 1, "agent loops in parallel, each claiming one ready task per cycle in its own worktree (docs/scale.md)")
	cmd.Flags().DurationVar(&opts.Workers.Heartbeat, "heartbeat", headless.DefaultHeartbeat, "with --workers: how often a task's bd lease (5 min) is renewed while its agent runs")
	cmd.Flags().BoolVar(&opts.Workers.AllowDirty, "allow-dirty", false, "with --workers: start although the main work tree has changes to tracked files (their merges may fail)")
	cmd.Flags().Bool("clean", false, "remove the worktrees and agent/* branches of earlier --workers runs whose tasks are closed and merged, then exit")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, `  0    the epic is complete (beads shows every descendant closed)
  1    failed: the agent or runtasks failed while running
  2    stopped at --max-cycles or --max-duration with work left
  3    needs a person: all remaining work is blocked or deferred (with
       --workers: a task quarantined after run.max_task_failures failed
       agent runs), or the agent made no progress
       (workflow.no_progress_cycles)
  4    usage or setup error: bad flags or configuration, the agent's
       binary missing, no such epic; bd failing, or a check that cannot
       run
  130  interrupted (Ctrl-C, SIGTERM or SIGHUP): the agent's process group
       was stopped and the state recorded`)
	return cmd
}

func runRun(ctx context.Context, o *runOptions) error {
	cfg := o.Config
	if o.Session != "" && o.Session != headless.SessionFresh && o.Session != headless.SessionResume {
		return exitCode(engine.ExitUsage, fmt.Errorf("--session %q: want %s or %s", o.Session, headless.SessionFresh, headless.SessionResume))
	}
	cfg.Run.Agent, cfg.Run.Session = cmp.Or(o.Agent, cfg.Run.Agent), cmp.Or(o.Session, cfg.Run.Session)
	if o.Grace <= 0 {
		return exitCode(engine.ExitUsage, fmt.Errorf("--grace %s: must be positive", o.Grace))
	}
	if o.Workers.N < 1 {
		return exitCode(engine.ExitUsage, fmt.Errorf("--workers %d: want 1 or more", o.Workers.N))
	}
	if o.Workers.Heartbeat <= 0 || o.Workers.Heartbeat >= 5*time.Minute {
		return exitCode(engine.ExitUsage, fmt.Errorf("--heartbeat %s: want more than 0 and less than bd's 5-minute lease", o.Workers.Heartbeat))
	}
	logger, closeLog := newLogger(cfg, o.Err)
	defer closeLog()
	o.Log = logger.With("cmd", "run")
	if cfg.Log.File == "" {
		o.LogOut = o.Err
	}
	o.Ports.Notify = notifyPort(o.Factory, o.cmd, cfg, o.src, projectTrusted(o.Factory, cfg), o.Log)
	var res headless.Result
	var err error
	// Workers > 1, or --workers given (even 1), runs headless.RunWorkers.
	if o.Workers.N > 1 || o.cmd.Flags().Changed("workers") {
		o.Workers.Actor = claim.Actor(cfg.Claim.Actor, o.Getenv, "")
		res, err = headless.RunWorkers(ctx, o.Options, o.Workers)
	} else {
		res, err = headless.Run(ctx, o.Options)
	}
	if err != nil {
		logger.Debug("run ended", "code", res.Code, "err", err)
		return exitCode(cmp.Or(res.Code, engine.ExitFailed), err) // 4 when nothing started
	}
	if res.Code != engine.ExitOK {
		return exitCode(res.Code, errSilent)
	}
	return nil
}

// secondInterrupt closes kill at the second SIGINT, SIGTERM or SIGHUP (the
// first cancels the context): the agent is killed at once, not after --grace.
func secondInterrupt() (kill <-chan struct{}, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	k := make(chan struct{})
	go func() {
		<-sigs
		if _, ok := <-sigs; ok {
			close(k)
		}
	}()
	return k, func() {
		signal.Stop(sigs) // no send after it returns: sigs can be closed
		close(sigs)
	}
}
