package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/notify"
	"github.com/runtasks/runtasks/internal/shell"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

type stopHookOptions struct {
	In       io.Reader
	Out, Err io.Writer
	Agent    string
	// LoadConfig loads the configuration from the hook's cwd.
	LoadConfig func(startDir string) (*config.Config, error)
	// Ports builds the engine's ports (bd, git, shell) for a config.
	Ports    func(cfg *config.Config) engine.Ports
	LogLevel string
	// ConfigErrorLog records a configuration error in the project's
	// decision log (the state directory cannot come from a broken file).
	ConfigErrorLog func(startDir string, in engine.Input, dec engine.Decision)
	// EpicFlag is true when --epic was given: it wins over a session binding.
	EpicFlag bool
	// Notify hands the decision's event to workflow.notify (detached);
	// it returns the event dispatched ("" for none). nil: no notify.
	Notify func(cfg *config.Config, in engine.Input, dec engine.Decision) (string, error)
}

func newStopHookCmd(f *Factory) *cobra.Command {
	opts := &stopHookOptions{}
	cmd := &cobra.Command{
		Use:   "stop-hook",
		Short: "Decide whether the agent may stop (run by the agent's Stop hook)",
		Long: `stop-hook reads the agent's Stop hook input on stdin and answers on stdout.
It reads the project's project.yaml only when trusted (runtasks trust).

While the epic's beads show ready or in-progress work, it blocks the stop and
re-feeds the orchestration prompt with a one-line state. A <promise> in the
agent's final message is accepted only when beads agrees. It allows the stop
when the epic is complete, when only blocked work remains (escalation to a
person), at max_cycles, and when bd fails (on_beads_error: allow).

Without an epic (--epic, RUNTASKS_EPIC, workflow.epic) and without the
done-token contract it allows every stop and prints nothing.

stdout carries only the agent's JSON; logs go to stderr or log.file.`,
		Example: `  # .claude/settings.json
  {"hooks":{"Stop":[{"hooks":[{"type":"command","command":"runtasks stop-hook --epic bd-x7y8","timeout":30}]}]}}

  # the TASKMASTER_DONE contract, no epic
  runtasks stop-hook --taskmaster

  # try it by hand
  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"Stop","last_assistant_message":"done"}' | runtasks stop-hook --epic bd-x7y8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In, opts.Out, opts.Err = f.In, f.Out, f.Err
			opts.LogLevel, _ = cmd.Flags().GetString("log-level")
			var src *config.Sources
			opts.LoadConfig = func(dir string) (*config.Config, error) {
				cfg, s, err := f.LoadHookConfig(cmd, dir)
				src = s
				return cfg, err
			}
			explicit, _ := cmd.Flags().GetString("config")
			opts.Notify = func(cfg *config.Config, in engine.Input, dec engine.Decision) (string, error) {
				return notifyDecision(cfg, src, notify.FromTrustedSource(explicit, hookFileTrusted(cfg)), selfPath, f.Environ(), in, dec, f.Now())
			}
			opts.Ports = func(cfg *config.Config) engine.Ports { return stopPorts(f, cfg, utcClock(f.Now)) }
			opts.ConfigErrorLog = func(dir string, in engine.Input, dec engine.Decision) {
				recordConfigError(f, dir, in, dec)
			}
			opts.EpicFlag = cmd.Flags().Changed("epic")
			return runStopHook(cmd.Context(), opts)
		},
	}
	cmd.Flags().String("epic", "", "epic whose beads drive the session (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().Int("max-cycles", 0, "blocks before the stop is allowed anyway (workflow.stop_hook.max_cycles)")
	cmd.Flags().Bool("taskmaster", false, "require the TASKMASTER_DONE::<session_id> line (workflow.done_token.required)")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "agent protocol: claude, codex, gemini or cursor (default: detected from the input)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, hookExitStatus)
	return cmd
}

// newBeadsClient builds the bd client a configuration describes; bd runs in
// the factory's environment. The state directory remembers which issues an
// epic's ready query had to read by id (beads.Client.Links).
func newBeadsClient(f *Factory, cfg *config.Config) *beads.Client {
	env := f.Environ()
	return &beads.Client{Bin: cfg.Beads.Bin, Dir: cfg.BeadsDir(), WorkDir: cfg.Root, Timeout: cfg.Beads.Timeout, Env: env,
		Slots: &beads.Slots{Dir: beads.SlotsDir(env), Max: cfg.Beads.MaxProcesses, Wait: cfg.Beads.QueueTimeout},
		Links: &state.Store{Dir: cfg.StateDir()}}
}

// stopPorts are the engine's ports for a configuration: bd, git, the
// shell for command checks.
func stopPorts(f *Factory, cfg *config.Config, now func() time.Time) engine.Ports {
	bd := newBeadsClient(f, cfg)
	repo := git.Repo{Dir: cfg.Root}
	return engine.Ports{Beads: bd, Workspace: repo, Worktrees: repo, Updater: bd,
		Runner: shellRunner{shell.Runner{Env: f.Environ()}}, Now: now}
}

// utcClock is now in UTC. The decision's times are stored in UTC; a time
// in the local zone would make its JSON read /etc/localtime at every stop.
func utcClock(now func() time.Time) func() time.Time {
	return func() time.Time { return now().UTC() }
}

// runStopHook never fails the agent: every problem allows the stop, is
// reported to the person in a systemMessage and logged, so a broken
// runtasks can neither trap an agent nor switch itself off silently. Exit
// status is always 0. It is wiring only: parse, load the configuration,
// read the agent's input, Stop, encode.
func runStopHook(ctx context.Context, o *stopHookOptions) (err error) {
	agent := o.Agent
	defer recoverHook("stop-hook", o.Out, o.Err, func(msg string) []byte {
		return hook.EncodeStop(agentOr(agent), engine.Decision{SystemMessage: msg})
	})
	payload, err := hook.Parse(o.In)
	if err != nil {
		fmt.Fprintf(o.Err, "runtasks stop-hook: %v; stop allowed\n", err)
		o.Out.Write(hook.EncodeStop(agentOr(agent), engine.Decision{
			SystemMessage: "runtasks: could not read the Stop hook's input (" + err.Error() + "); stop allowed."}))
		return nil
	}
	if agent == "" {
		agent = hook.Detect(payload)
	}
	if !hook.Known(agent) {
		fmt.Fprintf(o.Err, "runtasks stop-hook: unknown agent %q; stop allowed\n", agent)
		return nil
	}
	start, err := hookStart(payload.CWD)
	if err != nil {
		msg := "runtasks: " + err.Error() + "; this stop was not judged (allowed)."
		fmt.Fprintf(o.Err, "runtasks stop-hook: %s\n", msg)
		o.Out.Write(hook.EncodeStop(agent, engine.Decision{SystemMessage: msg}))
		return nil
	}
	cfg, err := o.LoadConfig(start)
	if err != nil {
		dec := engine.ConfigErrorDecision(err)
		fmt.Fprintf(o.Err, "runtasks stop-hook: %s\n", dec.SystemMessage)
		in, _ := hook.Input(agent, payload, false)
		if o.ConfigErrorLog != nil {
			o.ConfigErrorLog(start, in, dec)
		}
		o.Out.Write(hook.EncodeStop(agent, dec))
		return nil
	}
	logger, closeLog := newLogger(cfg, o.Err, o.LogLevel)
	defer closeLog()
	if cfg.Untrusted != nil {
		logger.Warn(cfg.Untrusted.Message())
	}
	in, inErr := hook.Input(agent, payload, cfg.Workflow.DoneToken.Required)
	if inErr != nil {
		logger.Warn("could not read the final message; judging without it", "err", inErr)
	}
	store := &state.Store{Dir: cfg.StateDir(), Warn: func(msg string) { logger.Warn(msg) }}
	addSpending(&in, cfg, store, logger)
	ports := o.Ports(cfg)
	ports.Usage = func(from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
		return hook.Usage(agent, payload, from)
	}
	dec, err := engine.Stop(ctx, store, cfg, engine.StopRequest{Input: in, EpicFromFlag: o.EpicFlag}, ports)
	if err != nil {
		logger.Error("stop allowed", "err", err)
	}
	logDecision(logger, in.SessionID, dec)
	if cfg.Untrusted != nil {
		dec.SystemMessage = joinMessages("runtasks: "+cfg.Untrusted.Message(), dec.SystemMessage)
	}
	if out := hook.EncodeStop(agent, dec); out != nil {
		o.Out.Write(out)
	}
	// After the answer: notify never delays or changes the stop.
	if o.Notify != nil {
		if event, err := o.Notify(cfg, in, dec); err != nil {
			logger.Warn("notify", "session", in.SessionID, "epic", dec.Epic, "outcome", dec.Outcome, "err", err)
		} else if event != "" {
			logger.Info("notify dispatched", "session", in.SessionID, "epic", dec.Epic, "event", event)
		}
	}
	return nil
}

// addSpending fills, when an epic budget is set, what the other
// sessions' loops spent. A failure is logged: the budget then counts this
// session only. (The stop's own usage is read by Stop, through
// Ports.Usage, for a driven session only.)
func addSpending(in *engine.Input, cfg *config.Config, store *state.Store, logger *log.Logger) {
	if b := cfg.Workflow.Budget; b.EpicTokens > 0 || b.EpicCost > 0 {
		var err error
		if in.OthersSpent, err = store.SpentByEpic(in.SessionID); err != nil {
			logger.Warn("could not sum the epic's spending; its budget counts this session only", "err", err)
		}
	}
}

// logDecision logs one decision of the engine.
func logDecision(logger *log.Logger, session string, dec engine.Decision) {
	lvl := log.InfoLevel
	switch {
	case dec.Outcome == state.OutcomeNotDriven:
		lvl = log.DebugLevel
	case dec.Outcome.Class() == state.ClassError:
		lvl = log.WarnLevel
	}
	logger.Log(lvl, "decision", "session", session, "epic", dec.Epic, "outcome", dec.Outcome, "block", dec.Block, "cycle", dec.Cycle, "why", dec.Why)
	for _, a := range dec.Actions {
		logger.Warn("beads changed", "session", session, "epic", dec.Epic, "action", a)
	}
}

// agentOr is the agent, or Claude Code's protocol when it is not known yet.
func agentOr(agent string) string {
	if hook.Known(agent) {
		return agent
	}
	return hook.Claude
}
