package engine

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
)

// Verdict statuses.
const (
	VerdictComplete   = "complete"
	VerdictIncomplete = "incomplete"
	VerdictSkipped    = "skipped" // nothing to judge (no epic, no transcript…)
	VerdictError      = "error"   // the check could not run (setup problem)
)

// Verdict is one checker's answer.
type Verdict struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Summary string `json:"summary,omitempty"` // one line: why this verdict
	// Feedback lists what is missing, most important first (FeedbackText
	// cuts it to feedback_limit).
	Feedback []string  `json:"feedback,omitempty"`
	Children []Verdict `json:"children,omitempty"`
	stop     *Decision // the beads checker's decision when it does not pass: the stop hook's answer
}

// CommandRunner runs a shell command in a directory (shell.Runner, adapted).
type CommandRunner interface {
	Run(ctx context.Context, dir, command string, timeout time.Duration) (CommandResult, error)
}

// CommandResult is how a command ended.
type CommandResult struct {
	ExitCode int
	Output   []byte // the tail of stdout and stderr
	TimedOut bool
}

// CheckContext is what a checker may look at: the stop, the configuration
// (its Root is the project directory) and the environment.
type CheckContext struct {
	Input  Input
	Config *config.Config
	Env    Env

	d                *decider  // runs the stop-hook rules for the beads checker
	completeDecision *Decision // the beads checker's decision, the answer when every check passes
}

// Checker is one completion check.
type Checker interface {
	Check(ctx context.Context, cc *CheckContext) Verdict
}

// Checkers are workflow.checks as checkers. An invalid spec (only in a
// Config made by hand) is a checker that reports its problem.
func Checkers(cfg *config.Config) []Checker {
	var out []Checker
	for i, s := range cfg.Workflow.Checks {
		if err := s.Validate(); err != nil {
			out = append(out, invalidCheck{name: cmp.Or(s.Name, s.Type), why: fmt.Sprintf("workflow.checks[%d]%v", i, err)})
			continue
		}
		out = append(out, buildCheck(s))
	}
	return out
}

// buildCheck makes the checker of a valid spec.
func buildCheck(s config.CheckSpec) Checker {
	name := cmp.Or(s.Name, s.Type)
	switch s.Type {
	case "beads":
		return beadsCheck{name: name}
	case "promise":
		return promiseCheck{name: name, texts: s.Texts}
	case "done_token":
		return doneTokenCheck{name: name, prefix: s.Prefix}
	case "command":
		return commandCheck{name: name, run: s.Run, dir: s.Dir, timeout: s.Timeout, tail: s.TailLines}
	case "files":
		return filesCheck{name: name, paths: s.Paths, nonEmpty: s.NonEmpty, template: s.Template}
	case "plan":
		return planCheck{name: name, required: s.Required}
	case "results":
		return resultsCheck{name: name}
	case "composite":
		c := compositeCheck{name: name, any: s.Mode == "any"}
		for _, sub := range s.Checks {
			c.checks = append(c.checks, buildCheck(sub))
		}
		return c
	}
	return invalidCheck{name: name, why: fmt.Sprintf("unknown checker %q", s.Type)}
}

// invalidCheck stands for a spec that could not be built: it cannot run.
type invalidCheck struct{ name, why string }

func (c invalidCheck) Check(context.Context, *CheckContext) Verdict {
	return Verdict{Check: c.name, Status: VerdictError, Summary: c.why}
}

// FeedbackText cuts feedback to limit items and a count of the rest (0: all).
func FeedbackText(items []string, limit int) []string {
	if limit <= 0 || len(items) <= limit {
		return items
	}
	return append(append([]string(nil), items[:limit]...), fmt.Sprintf("and %d more", len(items)-limit))
}

// beadsCheck is the stop hook's rules as a checker: complete when the rules
// accept the end, incomplete when they block; any other end is carried as
// the hook's decision.
type beadsCheck struct{ name string }

func (c beadsCheck) Check(ctx context.Context, cc *CheckContext) Verdict {
	v := Verdict{Check: c.name}
	if cc.d == nil {
		cc.d = &decider{ctx: ctx, in: cc.Input, cfg: cc.Config, env: cc.Env}
	}
	d := cc.d
	if d.epic() == "" && !d.cfg.Workflow.DoneToken.Required {
		return v.as(VerdictSkipped, "no epic to judge")
	}
	var dec Decision
	if d.epic() == "" {
		dec = d.tokenOnly()
	} else {
		dec = d.withEpic()
	}
	v.Summary = dec.Why
	switch {
	case dec.Outcome == state.OutcomeComplete || dec.Outcome == state.OutcomeTokenDone || dec.Outcome == state.OutcomeAccepted:
		v.Status = VerdictComplete
	case dec.Outcome == state.OutcomeBeadsError:
		v.Status = VerdictError
	default:
		v.Status = VerdictIncomplete
		for _, is := range d.activeIssues() {
			v.Feedback = append(v.Feedback, is.ID+" "+oneLine(is.Title, 80)+" ["+is.Status+"]")
		}
		if len(v.Feedback) == 0 {
			for _, is := range d.waitingIssues() {
				v.Feedback = append(v.Feedback, is.ID+" "+oneLine(is.Title, 80)+" ["+is.Status+"] needs a person")
			}
		}
	}
	if v.Status != VerdictComplete {
		v.stop = &dec
	}
	cc.completeDecision = &dec
	return v
}

// promiseCheck: the final message holds an allowed promise, or one of texts.
type promiseCheck struct {
	name  string
	texts []string
}

func (c promiseCheck) Check(_ context.Context, cc *CheckContext) Verdict {
	if strings.TrimSpace(cc.Input.FinalMessage) == "" {
		return Verdict{Check: c.name, Status: VerdictSkipped, Summary: "no final message"}
	}
	promises := slices.DeleteFunc(cc.Config.Promises(), func(p config.Promise) bool { return !cc.Config.AllowsExitOn(p.Condition) })
	if len(c.texts) > 0 {
		promises = nil
		for _, t := range c.texts {
			promises = append(promises, config.Promise{Text: t, Condition: config.CondAlways})
		}
	}
	if found := FindPromises(cc.Input.FinalMessage, promises); len(found) > 0 {
		return Verdict{Check: c.name, Status: VerdictComplete, Summary: fmt.Sprintf("promise %q made", found[0].Text)}
	}
	var texts []string
	for _, p := range promises {
		texts = append(texts, p.Text)
	}
	return Verdict{Check: c.name, Status: VerdictIncomplete, Summary: "no completion promise in the final message",
		Feedback: []string{"when it is true, end with one of: <promise>" + strings.Join(texts, "</promise>, <promise>") + "</promise>"}}
}

// doneTokenCheck: the final message holds this session's done line.
type doneTokenCheck struct{ name, prefix string }

func (c doneTokenCheck) Check(_ context.Context, cc *CheckContext) Verdict {
	prefix := cmp.Or(c.prefix, cc.Config.Workflow.DoneToken.Prefix)
	switch {
	case cc.Input.SessionID == "":
		return Verdict{Check: c.name, Status: VerdictSkipped, Summary: "no session id"}
	case HasDoneToken(cc.Input.FinalMessage, prefix, cc.Input.SessionID):
		return Verdict{Check: c.name, Status: VerdictComplete, Summary: "done token printed"}
	}
	return Verdict{Check: c.name, Status: VerdictIncomplete, Summary: "done token not printed",
		Feedback: []string{"print " + prefix + "::<session id> on a line of its own when everything is done"}}
}

// commandCheck runs a shell command; incomplete with its output's tail when it fails.
type commandCheck struct {
	name, run, dir string
	timeout        time.Duration
	tail           int
}

func (c commandCheck) Check(ctx context.Context, cc *CheckContext) Verdict {
	v := Verdict{Check: c.name}
	if cc.Env.Runner == nil {
		return v.as(VerdictError, "no command runner")
	}
	res, err := cc.Env.Runner.Run(ctx, cmp.Or(cc.Config.Path(c.dir), cc.Config.Root), c.run, c.timeout)
	switch {
	case err != nil:
		return v.as(VerdictError, fmt.Sprintf("`%s` could not run: %s", c.run, oneLine(err.Error(), 200)))
	case res.TimedOut:
		v.Status, v.Summary = VerdictIncomplete, fmt.Sprintf("`%s` timed out after %s", c.run, config.FormatDuration(c.timeout))
	case res.ExitCode != 0:
		v.Status, v.Summary = VerdictIncomplete, fmt.Sprintf("`%s` failed (exit %d)", c.run, res.ExitCode)
	default:
		return v.as(VerdictComplete, fmt.Sprintf("`%s` passed", c.run))
	}
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(res.Output, []byte("?"))), "\n"), "\n")
	if c.tail > 0 && len(lines) > c.tail {
		lines = lines[len(lines)-c.tail:]
	}
	v.Feedback = []string{v.Summary + "; the end of its output:\n" + strings.Join(lines, "\n")}
	return v
}

// filesCheck: paths must exist, optionally non-empty or changed from a template.
type filesCheck struct {
	name     string
	paths    []string
	nonEmpty bool
	template string
}

func (c filesCheck) Check(_ context.Context, cc *CheckContext) Verdict {
	v := Verdict{Check: c.name}
	var tmpl []byte
	if c.template != "" {
		b, err := agentfile.Read(cc.Config.Path(c.template), agentfile.MaxText)
		if err != nil {
			return v.as(VerdictError, "template unreadable: "+oneLine(err.Error(), 200))
		}
		tmpl = b
	}
	for _, p := range c.paths {
		b, err := agentfile.Read(cc.Config.Path(p), agentfile.MaxText)
		switch {
		case err != nil && os.IsNotExist(err):
			v.Feedback = append(v.Feedback, p+" is missing")
		case err != nil:
			v.Feedback = append(v.Feedback, p+" is unreadable: "+oneLine(err.Error(), 120))
		case c.nonEmpty && len(bytes.TrimSpace(b)) == 0:
			v.Feedback = append(v.Feedback, p+" is empty")
		case tmpl != nil && bytes.Equal(bytes.TrimSpace(b), bytes.TrimSpace(tmpl)):
			v.Feedback = append(v.Feedback, p+" is unchanged from "+c.template)
		}
	}
	return judged(v, fmt.Sprintf("%d of %d file(s) not ready", len(v.Feedback), len(c.paths)),
		fmt.Sprintf("%d file(s) ready", len(c.paths)))
}

// as is v with a status and a summary.
func (v Verdict) as(status, summary string) Verdict {
	v.Status, v.Summary = status, summary
	return v
}

// judged completes v, or makes it incomplete when it has feedback.
func judged(v Verdict, incomplete, complete string) Verdict {
	if len(v.Feedback) > 0 {
		return v.as(VerdictIncomplete, incomplete)
	}
	return v.as(VerdictComplete, complete)
}

// planCheck: the agent's own plan in its transcript must be all completed.
type planCheck struct {
	name     string
	required bool
}

func (c planCheck) Check(_ context.Context, cc *CheckContext) Verdict {
	v := Verdict{Check: c.name}
	// Nothing to read is skipped, or incomplete when a plan is required.
	nothing := func(summary, feedback string) Verdict {
		v.Status, v.Summary = VerdictSkipped, summary
		if c.required {
			v.Status, v.Feedback = VerdictIncomplete, []string{feedback}
		}
		return v
	}
	if cc.Input.TranscriptPath == "" {
		return nothing("no transcript", "no transcript to read a plan from")
	}
	items, found, err := ReadPlan(cc.Input.TranscriptPath)
	switch {
	case err != nil:
		return v.as(VerdictError, "transcript: "+oneLine(err.Error(), 200))
	case !found:
		return nothing("no plan in the transcript", "make a plan (TodoWrite / update_plan) and work it to the end")
	}
	for _, it := range items {
		if it.Status != PlanCompleted {
			v.Feedback = append(v.Feedback, fmt.Sprintf("%s [%s]", oneLine(it.Text, 100), it.Status))
		}
	}
	return judged(v, fmt.Sprintf("%d of %d plan item(s) not completed", len(v.Feedback), len(items)),
		fmt.Sprintf("all %d plan item(s) completed", len(items)))
}

// resultsCheck: every claimed task's RESULTS.md must be written.
type resultsCheck struct{ name string }

func (c resultsCheck) Check(_ context.Context, cc *CheckContext) Verdict {
	v := Verdict{Check: c.name}
	if len(cc.Input.Claims) == 0 {
		return v.as(VerdictSkipped, "no claimed tasks")
	}
	for _, u := range state.UntouchedResults(cc.Input.Claims) {
		v.Feedback = append(v.Feedback, filepath.Join(u.RunDir, state.ResultsFile)+" (task "+u.Task+") is not written")
	}
	return judged(v, fmt.Sprintf("%d result file(s) not written", len(v.Feedback)), "results written")
}

// compositeCheck: all_must_pass (default) stops at the first incomplete or
// failing check; any stops at the first complete one. Nestable.
type compositeCheck struct {
	name   string
	any    bool
	checks []Checker
}

func (c compositeCheck) Check(ctx context.Context, cc *CheckContext) Verdict {
	v := Verdict{Check: c.name}
	judged := 0
	for _, ch := range c.checks {
		sub := ch.Check(ctx, cc)
		v.Children = append(v.Children, sub)
		if v.stop == nil {
			v.stop = sub.stop
		}
		switch sub.Status {
		case VerdictSkipped:
			continue
		case VerdictError:
			return v.as(VerdictError, sub.Check+": "+sub.Summary)
		case VerdictComplete:
			judged++
			if c.any {
				v.Status, v.Summary, v.stop = VerdictComplete, sub.Check+": "+sub.Summary, nil
				return v
			}
		case VerdictIncomplete:
			judged++
			v.Feedback = append(v.Feedback, sub.Feedback...)
			if !c.any {
				return v.as(VerdictIncomplete, sub.Check+": "+sub.Summary)
			}
		}
	}
	switch {
	case judged == 0:
		return v.as(VerdictSkipped, "nothing to judge")
	case !c.any:
		return v.as(VerdictComplete, "all passed")
	}
	var why []string
	for _, sub := range v.Children {
		if sub.Status == VerdictIncomplete {
			why = append(why, sub.Check+": "+sub.Summary)
		}
	}
	return v.as(VerdictIncomplete, "none passed ("+strings.Join(why, "; ")+")")
}
