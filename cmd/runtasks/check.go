package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/transcript"
)

type checkOptions struct {
	*Factory
	Transcript string
	Session    string
	JSON       bool
	EpicFlag   bool // --epic given: it wins over a session binding
	cfg        *config.Config
}

func newCheckCmd(f *Factory) *cobra.Command {
	opts := &checkOptions{Factory: f}
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
tasks are not moved and no cycle is counted.`,
		Example: `  # in CI: fail the build while the epic has open work or tests fail
  runtasks check --epic bd-x7y8

  # judge a finished agent session, as JSON
  runtasks check --transcript ~/.claude/projects/p/session.jsonl --json

  # project.yaml
  workflow:
    checks:
      - beads
      - {type: command, run: "go test ./...", timeout: 10m}`,
		Args:    cobra.NoArgs,
		PreRunE: loadConfig(f.LoadConfig, &opts.cfg, engine.ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = cmp.Or(opts.Session, sessionFromEnv(f.Getenv))
			opts.EpicFlag = cmd.Flags().Changed("epic")
			return runCheck(cmd.Context(), opts)
		},
	}
	cmd.Flags().String("epic", "", "epic to judge (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().StringVar(&opts.Transcript, "transcript", "", "agent transcript to read the final message and the plan from")
	cmd.Flags().StringVar(&opts.Session, "session", "", "session id, for the done-token check (env RUNTASKS_SESSION)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the verdicts as JSON")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	setExitStatus(cmd, `  0  complete: every check that had something to judge passed
  2  work left: a check found work left (its feedback is printed)
  3  needs a person: only blocked or deferred work remains; or nothing to
     judge: every check was skipped (no epic, no transcript…)
  4  usage or setup error: bad flags, bad configuration, bd failing, a
     command that cannot start`)
	return cmd
}

type checkReport struct {
	Status  string           `json:"status"`
	Exit    int              `json:"exit"`
	Epic    string           `json:"epic,omitempty"`
	Outcome state.Outcome    `json:"outcome"`
	Why     string           `json:"why"`
	Checks  []engine.Verdict `json:"checks"`
}

// runCheck judges once through the stop transaction as a dry run and
// prints each check's verdict.
func runCheck(ctx context.Context, o *checkOptions) error {
	in := engine.Input{Event: engine.EventCheck, SessionID: o.Session, TranscriptPath: o.Transcript}
	if o.Transcript != "" {
		msg, err := transcript.LastAssistantText(o.Transcript)
		if err == nil && msg == "" {
			msg, err = transcript.LastAgentMessage(o.Transcript)
		}
		if err != nil {
			return exitCode(engine.ExitUsage, fmt.Errorf("transcript: %w", err))
		}
		in.FinalMessage = msg
	}
	dec, err := engine.Stop(ctx, &state.Store{Dir: o.cfg.StateDir()}, o.cfg,
		engine.StopRequest{Input: in, EpicFromFlag: o.EpicFlag, DryRun: true}, stopPorts(o.Factory, o.cfg))
	if err != nil {
		return exitCode(engine.ExitUsage, err)
	}
	rep := checkReport{Status: cmp.Or(checkStatuses[dec.Outcome.Class()], engine.VerdictError), Epic: dec.Epic,
		Checks: append([]engine.Verdict{}, dec.Verdicts...), Outcome: dec.Outcome, Why: dec.Why, Exit: engine.ExitStatus(dec.Outcome.Class())}
	if dec.Block {
		rep.Status = engine.VerdictIncomplete
	}
	if o.JSON {
		if err := printJSON(o.Out, rep); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		for _, v := range dec.Verdicts {
			checkPrint(&b, v, "", o.cfg.Workflow.FeedbackLimit)
		}
		fmt.Fprintf(&b, "result: %s\n", rep.Status)
		io.WriteString(o.Out, headless.Clean(b.String()))
	}
	if rep.Exit != 0 {
		return exitCode(rep.Exit, errSilent)
	}
	return nil
}

// checkStatuses word a decision's class as a check result (a blocked stop
// is incomplete; another class is an error).
var checkStatuses = map[state.Class]string{
	state.ClassWorkLeft:    engine.VerdictIncomplete,
	state.ClassDone:        engine.VerdictComplete,
	state.ClassPaused:      engine.VerdictComplete,
	state.ClassIgnored:     engine.VerdictSkipped,
	state.ClassNeedsPerson: "needs_person",
}

// checkPrint writes one verdict (and its children) as indented lines.
func checkPrint(w io.Writer, v engine.Verdict, indent string, limit int) {
	fmt.Fprintf(w, "%s%-10s %s", indent, v.Status, v.Check)
	if v.Summary != "" {
		io.WriteString(w, ": "+v.Summary)
	}
	io.WriteString(w, "\n")
	if len(v.Children) > 0 {
		for _, c := range v.Children {
			checkPrint(w, c, indent+"  ", limit)
		}
		return
	}
	for _, fb := range engine.FeedbackText(v.Feedback, limit) {
		io.WriteString(w, indent+"  - "+strings.ReplaceAll(fb, "\n", "\n"+indent+"    ")+"\n")
	}
}
