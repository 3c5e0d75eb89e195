package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
)

type hookOptions struct {
	*Factory
	Agent    string // --agent
	EpicFlag bool   // --epic given: it wins over a session binding
	Worker   string // RUNTASKS_TASK: a runtasks run worker's task
	Ports    func(cfg *config.Config) engine.Ports
	// Notify is the stop hook's notify port (nil: none).
	Notify func(h *hookCall) func(engine.Input, engine.Decision)
	// LoadConfig loads the configuration from the hook's cwd.
	LoadConfig func(startDir string) (*config.Config, *config.Sources, error)
	// ConfigError records a stop's configuration error (nil: it is only
	// said), so that status shows why runtasks is off.
	ConfigError func(h *hookCall, startDir string, dec engine.Decision)
	// FindStore finds the project's beads store; where says where it
	// looked when there is none (nil: not looked for).
	FindStore func(cfg *config.Config) (where string, ok bool)
}

// hookCmd is a hook command: cmd with the hooks' flags and EXIT STATUS,
// running run with the options wired to f.
func hookCmd(f *Factory, run func(context.Context, *hookOptions) error, cmd *cobra.Command) *cobra.Command {
	o := &hookOptions{}
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.wire(f, cmd)
		return run(cmd.Context(), o)
	}
	cmd.Flags().StringVar(&o.Agent, "agent", "", "agent protocol: claude, codex, gemini or cursor (default: detected from the input)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, hookExitStatus)
	return cmd
}

func (o *hookOptions) wire(f *Factory, cmd *cobra.Command) {
	o.Factory = f
	o.EpicFlag = cmd.Flags().Changed("epic")
	o.Worker = f.Getenv("RUNTASKS_TASK")
	o.Ports = func(cfg *config.Config) engine.Ports { return stopPorts(f, cfg) }
	o.Notify = func(h *hookCall) func(engine.Input, engine.Decision) {
		return notifyPort(f, cmd, h.cfg, h.src, hookFileTrusted(h.cfg), h.log)
	}
	o.ConfigError = func(h *hookCall, dir string, dec engine.Decision) {
		in, _ := hook.Input(h.agent, h.payload, false)
		recordConfigError(f, dir, in, dec)
	}
	o.LoadConfig = func(dir string) (*config.Config, *config.Sources, error) { return f.LoadHookConfig(cmd, dir) }
	o.FindStore = func(cfg *config.Config) (string, bool) {
		_, where, ok := beads.FindStore(cfg.BeadsDir(), cfg.Root, f.Environ())
		if d := f.Getenv(config.EnvProjectDir); !ok && d != "" {
			where += " (the search starts at " + config.EnvProjectDir + "=" + d + ", the directory the agent was started in)"
		}
		return where, ok
	}
}

// hookSpec names a hook and what a failure leaves undone: unread ends the
// message when the input cannot be read, unjudged when the hook cannot go
// on after reading it.
type hookSpec struct {
	name, event      string
	unread, unjudged string
	// needsSession: an input without a session id is let through, silently.
	needsSession bool
}

// hookCall is what the hooks' preamble found, for the hook's body.
type hookCall struct {
	*Factory
	spec    hookSpec
	payload hook.Payload
	agent   string
	cfg     *config.Config
	src     *config.Sources
	log     *log.Logger
	// notice is said to the person when the hook answers: the file the
	// hooks ignore because it is not trusted.
	notice string
	// noStore says where the beads store was looked for when there is none
	// ("" = found, or not looked for).
	noStore string
}

// runHook is every hook's preamble, then body. A hook never fails the
// agent: the exit status is always 0, stdout carries only the agent's
// JSON, and every problem (a panic too) leaves the event to the agent, is
// told to the person in a systemMessage and is logged on stderr.
func runHook(ctx context.Context, o *hookOptions, spec hookSpec, body func(context.Context, *hookCall)) error {
	// Until the input names the agent: --agent, else Claude Code's protocol.
	h := &hookCall{Factory: o.Factory, spec: spec, agent: hook.Claude}
	if hook.Known(o.Agent) {
		h.agent = o.Agent
	}
	defer recoverHook(h)
	p, err := hook.Parse(o.In)
	if err != nil {
		h.say(fmt.Sprintf("runtasks: could not read the %s hook's input (%v); %s.", spec.event, err, spec.unread))
		return nil
	}
	h.payload = p
	switch {
	case o.Agent == "":
		h.agent = hook.Detect(p)
	case !hook.Known(o.Agent):
		// Nothing can be said in an unknown protocol.
		fmt.Fprintf(o.Err, "runtasks %s: unknown agent %q; %s\n", spec.name, o.Agent, spec.unread)
		return nil
	}
	if spec.needsSession && h.session() == "" {
		return nil
	}
	start, err := hookStart(p.CWD)
	if err != nil {
		h.say("runtasks: " + err.Error() + "; " + spec.unjudged + ".")
		return nil
	}
	cfg, src, err := o.LoadConfig(start)
	if err != nil {
		dec := engine.ConfigErrorDecision(err)
		if o.ConfigError != nil && spec.event == hook.EventStop {
			o.ConfigError(h, start, dec)
		}
		h.say(dec.SystemMessage)
		return nil
	}
	logger, closeLog := newLogger(cfg, o.Err)
	defer closeLog()
	h.cfg, h.src, h.log = cfg, src, logger
	if cfg.Untrusted != nil {
		logger.Warn(cfg.Untrusted.Message())
		h.notice = "runtasks: " + cfg.Untrusted.Message()
	}
	if o.FindStore != nil {
		if where, ok := o.FindStore(cfg); !ok {
			h.noStore = where
		}
	}
	if h.noStore != "" {
		// Not a beads project: no session is driven here and nothing is
		// written (no .runtasks/). The stop hook says nothing at every stop
		// (the done-token contract alone needs no beads) but an untrusted
		// project.yaml, which may be what would make it one; the session
		// hook says it once, at the session's start, when an epic is
		// configured.
		switch {
		case spec.event == hook.EventStop && !cfg.Workflow.DoneToken.Required:
			logger.Debug("not driven: no beads store", "where", h.noStore)
			if h.notice != "" {
				h.say(h.notice)
			}
			return nil
		case spec.event == hook.EventSessionStart && cfg.Workflow.Epic != "":
			h.notice = joinMessages(h.notice, fmt.Sprintf("runtasks: %s names epic %s, but no beads store was found: %s. No session is driven here: start the agent in the project that holds .beads, or set BEADS_DIR (beads.dir).",
				h.src.Of("workflow.epic"), cfg.Workflow.Epic, h.noStore))
		}
	}
	body(ctx, h)
	return nil
}

// recoverHook ends a hook that panicked as every hook ends: exit status 0
// (Claude Code reads 2 as "block"), the agent let go with a systemMessage,
// the panic and its stack on stderr, which the agent's hook log keeps.
func recoverHook(h *hookCall) {
	r := recover()
	if r == nil {
		return
	}
	fmt.Fprintf(h.Err, "runtasks %s: panic: %v\n%s", h.spec.name, r, debug.Stack())
	h.Out.Write(hook.EncodeMessage(h.agent, fmt.Sprintf("runtasks %s crashed (panic: %v); allowed. Please report it with the hook's stderr.", h.spec.name, r)))
}

// say tells the person msg: a systemMessage (Cursor has none) and a line
// on stderr.
func (h *hookCall) say(msg string) {
	fmt.Fprintf(h.Err, "runtasks %s: %s\n", h.spec.name, strings.TrimPrefix(msg, "runtasks: "))
	h.Out.Write(hook.EncodeMessage(h.agent, msg)) // nil for Cursor: nothing
}

// answer gives the agent context text ("" for none) with the notice for
// the person; what the agent cannot take at this event goes to stderr.
func (h *hookCall) answer(text string) {
	if b := hook.EncodeContextMessage(h.agent, cmp.Or(h.payload.HookEventName, h.spec.event), text, h.notice); b != nil {
		h.Out.Write(b)
	} else if s := joinMessages(h.notice, text); s != "" {
		fmt.Fprintln(h.Err, s)
	}
}

// session is the input's session id (Cursor: the conversation).
func (h *hookCall) session() string {
	if h.payload.SessionID != "" {
		return h.payload.SessionID
	}
	return h.payload.ConversationID
}

// hookStart is the directory the configuration search starts from: the
// hook's cwd ("" = the working directory, for an input without one). A cwd
// that is not a directory is an error, never a reason to judge the
// process's own directory instead.
func hookStart(cwd string) (string, error) {
	if cwd == "" {
		return "", nil
	}
	fi, err := os.Stat(cwd)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("the hook's cwd %s does not exist", cwd)
	case err != nil:
		return "", fmt.Errorf("the hook's cwd: %w", err)
	case !fi.IsDir():
		return "", fmt.Errorf("the hook's cwd %s is not a directory", cwd)
	}
	return cwd, nil
}

// recordConfigError writes a configuration error to the decision log of
// the project that holds dir (the default state directory: a broken file
// cannot name another).
func recordConfigError(f *Factory, dir string, in engine.Input, dec engine.Decision) {
	root, _, err := config.FindProject(config.LoadOptions{StartDir: dir, Environ: f.Environ(), MainWorktree: mainWorktree})
	if err != nil {
		if root, err = f.Getwd(); err != nil {
			return
		}
		if dir != "" {
			root = dir
		}
	}
	store := &state.Store{Dir: filepath.Join(root, config.DefaultStateDir)}
	if err := store.Append(state.Record{Time: f.Now().UTC(), Session: in.SessionID, Epic: state.NoEpic, Agent: in.Agent,
		Event: in.Event, Outcome: dec.Outcome, Why: dec.Why}); err != nil {
		fmt.Fprintf(f.Err, "runtasks: decision log: %v\n", err)
	}
}

// joinMessages joins the non-empty messages for one systemMessage.
func joinMessages(msgs ...string) string {
	return strings.Join(slices.DeleteFunc(msgs, func(m string) bool { return m == "" }), "\n")
}
