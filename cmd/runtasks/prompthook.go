package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
)

// hookBeads is what the prompt and session hooks ask of beads.
type hookBeads interface {
	claim.Tracker
	Ready(ctx context.Context, epic string) ([]beads.Issue, error)
	Subtree(ctx context.Context, epic string) ([]beads.Issue, error)
}

type promptHookOptions struct {
	In       io.Reader
	Out, Err io.Writer
	Agent    string
	LogLevel string
	// LoadConfig loads the configuration from the hook's cwd.
	LoadConfig func(startDir string) (*config.Config, error)
	Beads      func(cfg *config.Config) hookBeads
	Getenv     func(string) string
	Now        func() time.Time
}

func newPromptHookCmd(f *Factory) *cobra.Command {
	opts := &promptHookOptions{}
	cmd := &cobra.Command{
		Use:   "prompt-hook",
		Short: "Claim tasks and arm sessions from the user's prompt (UserPromptSubmit hook)",
		Long: `prompt-hook reads the agent's UserPromptSubmit hook input on stdin.
It reads the project's project.yaml only when trusted (runtasks trust).

Only a prompt that starts with a request counts; a sentence that
mentions, quotes or negates one ("Do NOT run tasks for bd-x7y8") asks for
nothing. A configured pattern counts only where it matches at the prompt's
start.

A prompt that starts with the skill and an epic id — "/run-tasks bd-x7y8",
or "/runtasks:run-tasks bd-x7y8" as Claude Code names the plugin's skill
(claim.arm_patterns) — arms the session: its Stop hook then drives that
epic without a static --epic, and other sessions stay untouched. An id
beads does not know, or a closed issue, arms nothing.

A prompt that starts by claiming a task — "claim <id>", "select <id>",
"start <id>", "work on <id>", "pick up <id>", "/claim <id>"
(claim.patterns) — claims it as runtasks claim does, for the hook's
session, and answers the task's context (additionalContext): "Task
claimed: <id> | Plan: … | Goal: … | Run: …" and the run folder's files. An
epic is never claimed: the answer says "<id> is an epic: /run-tasks <id>
drives it".

Any other prompt passes through: nothing is printed and bd is not asked.
stdout carries only the agent's JSON. Exit status is always 0: a hook never
fails the agent.`,
		Example: `  # .claude/settings.json
  {"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"runtasks prompt-hook","timeout":30}]}]}}

  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"UserPromptSubmit","prompt":"claim bd-x7y8.3"}' | runtasks prompt-hook`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.wire(f, cmd)
			return runPromptHook(cmd.Context(), opts)
		},
	}
	opts.addFlags(cmd)
	setExitStatus(cmd, hookExitStatus)
	return cmd
}

// wire fills the options' I/O and dependencies from the factory; the
// prompt and session hooks share it.
func (o *promptHookOptions) wire(f *Factory, cmd *cobra.Command) {
	o.In, o.Out, o.Err = f.In, f.Out, f.Err
	o.LogLevel, _ = cmd.Flags().GetString("log-level")
	o.LoadConfig = func(dir string) (*config.Config, error) {
		cfg, _, err := f.LoadHookConfig(cmd, dir)
		return cfg, err
	}
	o.Beads = func(cfg *config.Config) hookBeads { return newBeadsClient(f, cfg) }
	o.Getenv, o.Now = f.Getenv, f.Now
}

// addFlags registers the flags the prompt and session hooks share.
func (o *promptHookOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Agent, "agent", "", "agent protocol: claude, codex, gemini or cursor (default: detected from the input)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
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

// joinMessages joins the non-empty messages for one systemMessage.
func joinMessages(msgs ...string) string {
	var out []string
	for _, m := range msgs {
		if m != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, "\n")
}

// hookMessage prints a message for the person from the prompt or session
// hook (stderr for an agent without a field for it).
func hookMessage(out, errw io.Writer, agent, msg string) {
	if b := hook.EncodeMessage(agent, msg); b != nil {
		out.Write(b)
	} else {
		fmt.Fprintln(errw, msg)
	}
}

// hookSession is the session id of a hook payload (Cursor: the conversation).
func hookSession(p hook.Payload) string {
	if p.SessionID != "" {
		return p.SessionID
	}
	return p.ConversationID
}

func runPromptHook(ctx context.Context, o *promptHookOptions) error {
	defer recoverHook("prompt-hook", o.Out, o.Err, func(msg string) []byte { return hook.EncodeMessage(agentOr(o.Agent), msg) })
	payload, err := hook.Parse(o.In)
	if err != nil {
		fmt.Fprintf(o.Err, "runtasks prompt-hook: %v; prompt passed through\n", err)
		return nil
	}
	start, err := hookStart(payload.CWD)
	if err != nil {
		fmt.Fprintf(o.Err, "runtasks prompt-hook: %v\n", err)
		hookMessage(o.Out, o.Err, hookAgent(o.Agent, payload), "runtasks: "+err.Error()+"; the prompt was passed through.")
		return nil
	}
	cfg, err := o.LoadConfig(start)
	if err != nil {
		hookConfigError("prompt-hook", o.Out, o.Err, hookAgent(o.Agent, payload), err)
		return nil
	}
	logger, closeLog := newLogger(cfg, o.Err, o.LogLevel)
	defer closeLog()
	var notice string // said to the person when the prompt asks runtasks for something
	if cfg.Untrusted != nil {
		logger.Warn(cfg.Untrusted.Message())
		notice = "runtasks: " + cfg.Untrusted.Message()
	}
	m, err := claim.NewMatcher(cfg.Claim)
	if err != nil {
		logger.Error("prompt passed through", "err", err)
		return nil
	}
	intent, ok := m.Match(payload.Prompt)
	if !ok {
		return nil
	}
	agent := o.Agent
	if agent == "" {
		agent = hook.Detect(payload)
	}
	session := hookSession(payload)
	var text string
	switch {
	case session == "":
		text = fmt.Sprintf("runtasks: the hook input has no session id, so %s was not %sed.", intent.ID, intent.Kind)
	case intent.Kind == claim.KindArm:
		text = armSession(ctx, cfg, o.Beads(cfg), session, intent.ID, o.Now())
	default:
		res, err := claim.Claim(ctx, o.Beads(cfg), claimRequest(cfg, intent.ID, session, "", o.Getenv, o.Now()))
		if err != nil {
			text = claim.FailureText(intent.ID, err)
		} else {
			text = res.Text()
		}
	}
	logger.Info("prompt hook", "session", session, "intent", intent.Kind, "id", intent.ID)
	event := payload.HookEventName
	if event == "" {
		event = hook.EventPromptSubmit
	}
	if out := hook.EncodeContextMessage(agent, event, text, notice); out != nil {
		o.Out.Write(out)
	} else {
		// Cursor's beforeSubmitPrompt takes no context: say it on stderr.
		fmt.Fprintln(o.Err, joinMessages(notice, text))
	}
	return nil
}

// armSession binds session to epic after checking that beads knows the
// epic, and returns the context to inject.
func armSession(ctx context.Context, cfg *config.Config, bd hookBeads, session, epic string, now time.Time) string {
	is, _, err := claim.Arm(ctx, bd, &state.Store{Dir: cfg.StateDir()}, session, epic, now)
	if err != nil {
		return claim.ArmFailureText(epic, err)
	}
	state := "Ready now: unknown (bd failed: %v)."
	if ready, err := bd.Ready(ctx, epic); err != nil {
		state = fmt.Sprintf(state, err)
	} else {
		state = claim.StateLine(ready)
	}
	return claim.ArmText(is, state, orchestrationPrompt(cfg, epic, session))
}

// orchestrationPrompt renders the orchestration prompt for epic ("" when
// its template is broken: the stop hook reports that).
func orchestrationPrompt(cfg *config.Config, epic, session string) string {
	p, err := engine.RenderPrompt(cfg, epic, session)
	if err != nil {
		return ""
	}
	return p
}
