package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/git"
	"github.com/runtasks/runtasks/orchestrator"
	"github.com/runtasks/runtasks/prompts"
	"github.com/runtasks/runtasks/shell"
	"github.com/runtasks/runtasks/transcript"
)

func init() { commands = append(commands, newCheckCmd) }

// Exit statuses of runtasks check.
const (
	checkExitComplete   = 0
	checkExitIncomplete = 2
	checkExitNothing    = 3
	checkExitSetup      = 4
)

type checkOptions struct {
	Out        io.Writer
	Config     *orchestrator.Config
	Tracker    orchestrator.Tracker
	Runner     orchestrator.CommandRunner
	Workspace  orchestrator.Workspace
	Now        func() time.Time
	Transcript string
	Session    string
	JSON       bool
}

func newCheckCmd(f *Factory) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Run the configured completion checks outside any agent (for CI)",
		Long: `check runs workflow.checks (docs/checkers.md) once, as the stop hook would at
a stop, and prints each checker's verdict: complete, incomplete (with its
feedback), skipped (nothing to judge) or error. With no checks configured it
runs the built-in chain: the stop hook's beads rules, which judge promises and
the done token too.

The final message comes from --transcript (a Claude Code or Codex transcript);
the plan checker reads the plan from it too. check changes nothing: stuck
tasks are not moved and no cycle is counted.

EXIT STATUS
  0  complete: every check that had something to judge passed
  2  incomplete: a check found work left (its feedback is printed)
  3  nothing to judge: every check was skipped (no epic, no transcript…)
  4  usage or setup error: bad flags, bad configuration, bd failing, a
     command that cannot start`,
		Example: `  # in CI: fail the build while the epic has open work or tests fail
  runtasks check --epic bd-x7y8

  # judge a finished agent session, as JSON
  runtasks check --transcript ~/.claude/projects/p/session.jsonl --json

  # project.yaml
  workflow:
    checks:
      - beads
      - {type: command, run: "go test ./...", timeout: 10m}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := f.LoadConfig(cmd, "")
			if err != nil {
				return exitCode(checkExitSetup, err)
			}
			opts.Out, opts.Config, opts.Now = f.Out, cfg, f.Now
			opts.Tracker = newBeadsClient(f, cfg)
			opts.Workspace = git.Repo{Dir: cfg.Root}
			opts.Runner = shellRunner{shell.Runner{Env: f.Environ()}}
			return runCheck(cmd.Context(), opts)
		},
	}
	cmd.Flags().String("epic", "", "epic to judge (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().StringVar(&opts.Transcript, "transcript", "", "agent transcript to read the final message and the plan from")
	cmd.Flags().StringVar(&opts.Session, "session", "", "session id, for the done-token check")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the verdicts as JSON")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return exitCode(checkExitSetup, err) })
	return cmd
}

type checkReport struct {
	Status string                 `json:"status"`
	Exit   int                    `json:"exit"`
	Epic   string                 `json:"epic,omitempty"`
	Checks []orchestrator.Verdict `json:"checks"`
}

func runCheck(ctx context.Context, o *checkOptions) error {
	cfg := o.Config
	checks, err := orchestrator.BuildChecks(cfg.Workflow.Checks)
	if err != nil {
		return exitCode(checkExitSetup, err)
	}
	in := orchestrator.Input{Event: "check", SessionID: o.Session, TranscriptPath: o.Transcript, CWD: cfg.Root}
	if o.Transcript != "" {
		msg, err := transcript.LastAssistantText(o.Transcript)
		if err == nil && msg == "" {
			msg, err = transcript.LastAgentMessage(o.Transcript)
		}
		if err != nil {
			return exitCode(checkExitSetup, fmt.Errorf("transcript: %w", err))
		}
		in.FinalMessage = msg
	}
	prompt := ""
	if tmpl, err := prompts.Load(cfg.PromptPath()); err == nil {
		prompt, _ = prompts.Render(tmpl, prompts.Data{Epic: cfg.Workflow.Epic, Session: o.Session, MaxCycles: cfg.Workflow.StopHook.MaxCycles})
	}
	cc := &orchestrator.CheckContext{
		Input: in, Config: cfg, Dir: cfg.Root, Runner: o.Runner, Transcript: o.Transcript,
		Env: orchestrator.Env{Beads: o.Tracker, Workspace: o.Workspace, Runner: o.Runner, Prompt: prompt, Now: o.Now()},
	}
	verdicts, status := orchestrator.RunChecks(ctx, checks, cc)
	rep := checkReport{Status: status, Epic: cfg.Workflow.Epic, Checks: verdicts}
	switch status {
	case orchestrator.VerdictComplete:
		rep.Exit = checkExitComplete
	case orchestrator.VerdictIncomplete:
		rep.Exit = checkExitIncomplete
	case orchestrator.VerdictSkipped:
		rep.Exit = checkExitNothing
	default:
		rep.Exit = checkExitSetup
	}
	if o.JSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "%s\n", b)
	} else {
		var b strings.Builder
		for _, v := range verdicts {
			checkPrint(&b, v, "", cfg.Workflow.FeedbackLimit)
		}
		fmt.Fprintf(&b, "result: %s\n", status)
		io.WriteString(o.Out, b.String())
	}
	if rep.Exit != 0 {
		return exitCode(rep.Exit, errSilent)
	}
	return nil
}

// checkPrint writes one verdict (and its children) as indented lines.
func checkPrint(b *strings.Builder, v orchestrator.Verdict, indent string, limit int) {
	fmt.Fprintf(b, "%s%-10s %s", indent, v.Status, v.Check)
	if v.Summary != "" {
		b.WriteString(": " + v.Summary)
	}
	b.WriteString("\n")
	if len(v.Children) > 0 {
		for _, c := range v.Children {
			checkPrint(b, c, indent+"  ", limit)
		}
		return
	}
	for _, fb := range orchestrator.FeedbackText(v.Feedback, limit) {
		b.WriteString(indent + "  - " + strings.ReplaceAll(fb, "\n", "\n"+indent+"    ") + "\n")
	}
}
