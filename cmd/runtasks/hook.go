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
	Notify func(engine.Input, engine.Decision)
	// LoadConfig loads the configuration from the hook's cwd.
	LoadConfig func(startDir string) (*config.Config, *config.Sources, error)
	// ConfigError records a stop's configuration error (nil: it is only
	// said), so that status shows why runtasks is off.
	ConfigError func(startDir string, dec engine.Decision)
	// FindStore finds the project's beads store; where says where it
	// looked when there is none (nil: not looked for).
	FindStore func(cfg *config.Config) (where string, ok bool)

	// argErr is what was wrong with the command's flags or arguments.
	argErr error
	// answered: the agent's JSON is out; nothing more goes to stdout.
	answered bool

	// What runHook's preamble found, for the hook's body.
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

// hookCmd is a hook command: cmd with the hooks' flags and EXIT STATUS,
// running run with the options wired to f.
func hookCmd(f *Factory, run func(context.Context, *hookOptions) error, cmd *cobra.Command) *cobra.Command {
	o := &hookOptions{Factory: f}
	o.Ports = func(cfg *config.Config) engine.Ports { return stopPorts(f, cfg) }
	o.Notify = func(in engine.Input, dec engine.Decision) {
		// The hooks read a project.yaml only when it is trusted
		// (Factory.LoadHookConfig): the file read may run commands.
		notifyPort(f, cmd, o.cfg, o.src, func() bool { return o.cfg.Untrusted == nil }, o.log)(in, dec)
	}
	o.ConfigError = o.recordConfigError
	o.LoadConfig = func(dir string) (*config.Config, *config.Sources, error) { return f.LoadHookConfig(cmd, dir) }
	o.FindStore = func(cfg *config.Config) (string, bool) {
		_, where, ok := beads.FindStore(cfg.BeadsDir(), cfg.Root, f.Environ())
		if d := f.Getenv(config.EnvProjectDir); !ok && d != "" {
			where += " (the search starts at " + config.EnvProjectDir + "=" + d + ", the directory the agent was started in)"
		}
		return where, ok
	}
	// A hook answers its own bad arguments too, in the agent's protocol
	// with exit status 0 (runHook says them): cobra's usage error would
	// exit 4.
	cmd.Args = cobra.ArbitraryArgs
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		o.argErr = err
		return cmd.RunE(cmd, nil)
	})
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 && o.argErr == nil {
			o.argErr = fmt.Errorf("unexpected argument %q", args[0])
		}
		o.EpicFlag, o.Worker = cmd.Flags().Changed("epic"), f.Getenv("RUNTASKS_TASK")
		return run(cmd.Context(), o)
	}
	cmd.Flags().StringVar(&o.Agent, "agent", "", "agent protocol: claude, codex, gemini or cursor (default: detected from the input)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, hookExitStatus)
	return cmd
}

// hookSpec names a hook and what a failure leaves undone: unread ends the
// message when the input cannot be read, unjudged when the hook cannot go
// on after reading it.
type hookSpec struct {
	name, event      string
	unread, unjudged string
	// needsSession: an input without a session id is let through, silently.
	needsSession bool
	// pass lets an input through at once, silently, before anything else
	// is read (nil: none is).
	pass func(o *hookOptions, p hook.Payload) bool
}

// runHook is every hook's preamble, then body. A hook never fails the
// agent: the exit status is always 0, stdout carries only the agent's
// JSON, and every problem (a panic too) leaves the event to the agent, is
// told to the person in a systemMessage and is logged on stderr.
func runHook(ctx context.Context, o *hookOptions, spec hookSpec, body func(context.Context)) error {
	// Until the input names the agent: --agent, else Claude Code's protocol.
	o.spec, o.agent = spec, hook.Claude
	if hook.Known(o.Agent) {
		o.agent = o.Agent
	}
	defer recoverHook(o)
	p, err := hook.Parse(o.In)
	if err != nil {
		o.say(fmt.Sprintf("runtasks: could not read the %s hook's input (%v); %s.", spec.event, err, spec.unread))
		return nil
	}
	o.payload = p
	if spec.pass != nil && spec.pass(o, p) {
		return nil
	}
	switch {
	case o.Agent == "":
		o.agent = hook.Detect(p)
	case !hook.Known(o.Agent):
		// Nothing can be said in an unknown protocol.
		fmt.Fprintf(o.Err, "runtasks %s: unknown agent %q; %s\n", spec.name, o.Agent, spec.unread)
		return nil
	}
	if o.argErr != nil {
		o.say(fmt.Sprintf("runtasks: bad arguments in the hook command (%v); %s.", o.argErr, spec.unjudged))
		return nil
	}
	if spec.needsSession && o.session() == "" {
		return nil
	}
	// The configuration search starts from the hook's cwd ("" = the working
	// directory, for an input without one). A cwd that is not a directory is
	// an error, never a reason to judge the process's own directory instead.
	if fi, err := os.Stat(p.CWD); p.CWD != "" && (err != nil || !fi.IsDir()) {
		why := fmt.Sprintf("the hook's cwd: %v", err)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			why = "the hook's cwd " + p.CWD + " does not exist"
		case err == nil:
			why = "the hook's cwd " + p.CWD + " is not a directory"
		}
		o.say("runtasks: " + why + "; " + spec.unjudged + ".")
		return nil
	}
	o.cfg, o.src, err = o.LoadConfig(p.CWD)
	if err != nil {
		dec := engine.ConfigErrorDecision(err)
		if o.ConfigError != nil && spec.event == hook.EventStop {
			o.ConfigError(p.CWD, dec)
		}
		o.say(dec.SystemMessage)
		return nil
	}
	var closeLog func()
	o.log, closeLog = newLogger(o.cfg, o.Err)
	defer closeLog()
	if o.cfg.Untrusted != nil {
		o.log.Warn(o.cfg.Untrusted.Message())
		o.notice = "runtasks: " + o.cfg.Untrusted.Message()
	}
	if o.FindStore != nil {
		if where, ok := o.FindStore(o.cfg); !ok {
			o.noStore = where
		}
	}
	if o.noStore != "" {
		// Not a beads project: no session is driven here and nothing is
		// written (no .runtasks/). The stop hook says nothing at every stop
		// (the done-token contract alone needs no beads) but an untrusted
		// project.yaml, which may be what would make it one; the session
		// hook says it once, at the session's start, when an epic is
		// configured.
		switch {
		case spec.event == hook.EventStop && !o.cfg.Workflow.DoneToken.Required:
			o.log.Debug("not driven: no beads store", "where", o.noStore)
			if o.notice != "" {
				o.say(o.notice)
			}
			return nil
		case spec.event == hook.EventSessionStart && o.cfg.Workflow.Epic != "":
			o.notice = joinMessages(o.notice, fmt.Sprintf("runtasks: %s names epic %s, but no beads store was found: %s. No session is driven here: start the agent in the project that holds .beads, or set BEADS_DIR (beads.dir).",
				o.src.Of("workflow.epic"), o.cfg.Workflow.Epic, o.noStore))
		}
	}
	body(ctx)
	return nil
}

// recoverHook ends a hook that panicked as every hook ends: exit status 0
// (Claude Code reads 2 as "block"), the agent let go with a systemMessage,
// the panic and its stack on stderr, which the agent's hook log keeps. A
// panic after the hook answered (in notify, say) leaves the answer as the
// only JSON on stdout.
func recoverHook(o *hookOptions) {
	r := recover()
	if r == nil {
		return
	}
	fmt.Fprintf(o.Err, "runtasks %s: panic: %v\n%s", o.spec.name, r, debug.Stack())
	if !o.answered {
		o.reply(hook.EncodeMessage(o.agent, fmt.Sprintf("runtasks %s crashed (panic: %v); allowed. Please report it with the hook's stderr.", o.spec.name, r)))
	}
}

// reply writes the hook's answer, the agent's JSON, on stdout (nil: none).
func (o *hookOptions) reply(b []byte) {
	if b != nil {
		o.answered = true
		o.Out.Write(b)
	}
}

// say tells the person msg: a systemMessage (Cursor has none) and a line
// on stderr.
func (o *hookOptions) say(msg string) {
	fmt.Fprintf(o.Err, "runtasks %s: %s\n", o.spec.name, strings.TrimPrefix(msg, "runtasks: "))
	o.reply(hook.EncodeMessage(o.agent, msg)) // nil for Cursor: nothing
}

// answer gives the agent context text ("" for none) with the notice for
// the person; what the agent cannot take at this event goes to stderr.
func (o *hookOptions) answer(text string) {
	if b := hook.EncodeContextMessage(o.agent, cmp.Or(o.payload.HookEventName, o.spec.event), text, o.notice); b != nil {
		o.reply(b)
	} else if s := joinMessages(o.notice, text); s != "" {
		fmt.Fprintln(o.Err, s)
	}
}

// session is the input's session id (Cursor: the conversation).
func (o *hookOptions) session() string {
	return cmp.Or(o.payload.SessionID, o.payload.ConversationID)
}

// recordConfigError writes a configuration error to the decision log of
// the project that holds dir (the default state directory: a broken file
// cannot name another).
func (o *hookOptions) recordConfigError(dir string, dec engine.Decision) {
	in, _ := hook.Input(o.agent, o.payload, false)
	root, _, err := config.FindProject(config.LoadOptions{StartDir: dir, Environ: o.Environ(), MainWorktree: mainWorktree})
	if err != nil {
		wd, err := o.Getwd()
		if err != nil {
			return
		}
		root = cmp.Or(dir, wd)
	}
	store := &state.Store{Dir: filepath.Join(root, config.DefaultStateDir)}
	if err := store.Append(state.Record{Time: o.Now().UTC(), Session: in.SessionID, Epic: state.NoEpic, Agent: in.Agent,
		Event: in.Event, Outcome: dec.Outcome, Why: dec.Why}); err != nil {
		fmt.Fprintf(o.Err, "runtasks: decision log: %v\n", err)
	}
}

// joinMessages joins the non-empty messages for one systemMessage.
func joinMessages(msgs ...string) string {
	return strings.Join(slices.DeleteFunc(msgs, func(m string) bool { return m == "" }), "\n")
}
