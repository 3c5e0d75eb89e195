package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/transcript"
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

// check runs the checker a spec of workflow.checks or workflow.verify names.
func (d *decider) check(s config.CheckSpec) Verdict {
	v := Verdict{Check: cmp.Or(s.Name, s.Type)}
	switch s.Type {
	case "beads":
		return d.checkBeads(v)
	case "promise":
		return d.checkPromise(s.Texts, v)
	case "done_token": // the final message holds this session's done line
		prefix := cmp.Or(s.Prefix, d.cfg.Workflow.DoneToken.Prefix)
		switch {
		case d.in.SessionID == "":
			return v.as(VerdictSkipped, "no session id")
		case HasDoneToken(d.in.FinalMessage, prefix, d.in.SessionID):
			return v.as(VerdictComplete, "done token printed")
		}
		v.Feedback = []string{"print " + prefix + "::<session id> on a line of its own when everything is done"}
		return v.as(VerdictIncomplete, "done token not printed")
	case "command":
		return d.checkCommand(s, v)
	case "files":
		return d.checkFiles(s, v)
	case "plan":
		return d.checkPlan(s.Required, v)
	case "results": // every claimed task's RESULTS.md is written
		if len(d.in.Claims) == 0 {
			return v.as(VerdictSkipped, "no claimed tasks")
		}
		for _, u := range state.UntouchedResults(d.in.Claims) {
			v.Feedback = append(v.Feedback, filepath.Join(u.RunDir, state.ResultsFile)+" (task "+u.Task+") is not written")
		}
		return judged(v, fmt.Sprintf("%d result file(s) not written", len(v.Feedback)), "results written")
	case "composite":
		return d.checkAll(v, s.Mode == "any", s.Checks, "")
	}
	return v.as(VerdictError, fmt.Sprintf("unknown checker %q", s.Type))
}

// FeedbackText cuts feedback to limit items and a count of the rest (0: all).
func FeedbackText(items []string, limit int) []string {
	if limit <= 0 || len(items) <= limit {
		return items
	}
	return append(append([]string(nil), items[:limit]...), fmt.Sprintf("and %d more", len(items)-limit))
}

// checkBeads is the stop hook's rules as a checker: complete when the rules
// accept the end, incomplete when they block; any other end is carried as
// the hook's decision.
func (d *decider) checkBeads(v Verdict) Verdict {
	if d.in.Epic == "" && !d.cfg.Workflow.DoneToken.Required {
		return v.as(VerdictSkipped, "no epic to judge")
	}
	dec := d.rules()
	v.Summary = dec.Why
	switch {
	case dec.Outcome.Done():
		v.Status = VerdictComplete
	case dec.Outcome == state.OutcomeBeadsError:
		v.Status = VerdictError
	default:
		v.Status = VerdictIncomplete
		if v.Feedback = issueLines(d.activeIssues(), ""); len(v.Feedback) == 0 {
			v.Feedback = issueLines(d.waitingIssues(), " needs a person")
		}
	}
	if v.Status != VerdictComplete {
		v.stop = &dec
	}
	d.beadsDecision = &dec
	return v
}

// checkPromise: the final message holds an allowed promise, or one of texts.
func (d *decider) checkPromise(texts []string, v Verdict) Verdict {
	if strings.TrimSpace(d.in.FinalMessage) == "" {
		return v.as(VerdictSkipped, "no final message")
	}
	if len(texts) == 0 {
		texts = mapped(d.promises(), func(p config.Promise) string { return p.Text })
	}
	promises := mapped(texts, func(t string) config.Promise { return config.Promise{Text: t} }) // FindPromises compares texts only
	if found := FindPromises(d.in.FinalMessage, promises); len(found) > 0 {
		return v.as(VerdictComplete, fmt.Sprintf("promise %q made", found[0].Text))
	}
	v.Feedback = []string{"when it is true, end with one of: <promise>" + strings.Join(texts, "</promise>, <promise>") + "</promise>"}
	return v.as(VerdictIncomplete, "no completion promise in the final message")
}

// checkCommand runs a shell command; incomplete with its output's tail when it fails.
func (d *decider) checkCommand(s config.CheckSpec, v Verdict) Verdict {
	if d.env.Runner == nil {
		return v.as(VerdictError, "no command runner")
	}
	res, err := d.env.Runner(d.ctx, cmp.Or(d.cfg.Path(s.Dir), d.cfg.Root), d.exports+s.Run, s.Timeout)
	switch {
	case err != nil:
		return v.as(VerdictError, fmt.Sprintf("`%s` could not run: %s", s.Run, OneLine(err.Error(), 200)))
	case res.TimedOut:
		v.Status, v.Summary = VerdictIncomplete, fmt.Sprintf("`%s` timed out after %s", s.Run, config.FormatDuration(s.Timeout))
	case res.ExitCode != 0:
		v.Status, v.Summary = VerdictIncomplete, fmt.Sprintf("`%s` failed (exit %d)", s.Run, res.ExitCode)
	default:
		return v.as(VerdictComplete, fmt.Sprintf("`%s` passed", s.Run))
	}
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(res.Output, []byte("?"))), "\n"), "\n")
	if s.TailLines > 0 && len(lines) > s.TailLines {
		lines = lines[len(lines)-s.TailLines:]
	}
	v.Feedback = []string{v.Summary + "; the end of its output:\n" + strings.Join(lines, "\n")}
	return v
}

// checkFiles: paths must exist, optionally non-empty or changed from a template.
func (d *decider) checkFiles(s config.CheckSpec, v Verdict) Verdict {
	var tmpl []byte
	if s.Template != "" {
		b, err := agentfile.Read(d.cfg.Path(s.Template), agentfile.MaxText)
		if err != nil {
			return v.as(VerdictError, "template unreadable: "+OneLine(err.Error(), 200))
		}
		tmpl = b
	}
	for _, p := range s.Paths {
		b, err := agentfile.Read(d.cfg.Path(p), agentfile.MaxText)
		switch {
		case err != nil && os.IsNotExist(err):
			v.Feedback = append(v.Feedback, p+" is missing")
		case err != nil:
			v.Feedback = append(v.Feedback, p+" is unreadable: "+OneLine(err.Error(), 120))
		case s.NonEmpty && len(bytes.TrimSpace(b)) == 0:
			v.Feedback = append(v.Feedback, p+" is empty")
		case tmpl != nil && bytes.Equal(bytes.TrimSpace(b), bytes.TrimSpace(tmpl)):
			v.Feedback = append(v.Feedback, p+" is unchanged from "+s.Template)
		}
	}
	return judged(v, fmt.Sprintf("%d of %d file(s) not ready", len(v.Feedback), len(s.Paths)),
		fmt.Sprintf("%d file(s) ready", len(s.Paths)))
}

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

// checkPlan: the agent's own plan in its transcript must be all completed.
// Nothing to read is skipped, or incomplete when a plan is required.
func (d *decider) checkPlan(required bool, v Verdict) Verdict {
	nothing := func(summary, feedback string) Verdict {
		if required {
			v.Feedback = []string{feedback}
			return v.as(VerdictIncomplete, summary)
		}
		return v.as(VerdictSkipped, summary)
	}
	if d.in.TranscriptPath == "" {
		return nothing("no transcript", "no transcript to read a plan from")
	}
	items, found, err := ReadPlan(d.in.TranscriptPath)
	switch {
	case err != nil:
		return v.as(VerdictError, "transcript: "+OneLine(err.Error(), 200))
	case !found:
		return nothing("no plan in the transcript", "make a plan (TodoWrite / update_plan) and work it to the end")
	}
	for _, it := range items {
		if it.Status != PlanCompleted {
			v.Feedback = append(v.Feedback, fmt.Sprintf("%s [%s]", OneLine(it.Text, 100), it.Status))
		}
	}
	return judged(v, fmt.Sprintf("%d of %d plan item(s) not completed", len(v.Feedback), len(items)),
		fmt.Sprintf("all %d plan item(s) completed", len(items)))
}

// checkAll runs specs as a composite: all_must_pass stops at the first
// incomplete or failing check; any stops at the first complete one. where
// names the specs in the configuration to validate each first (workflow.checks:
// a Config made by hand may hold an invalid one); "" runs them as they are.
func (d *decider) checkAll(v Verdict, any bool, specs []config.CheckSpec, where string) Verdict {
	judged, incomplete := 0, []string{}
	for i, s := range specs {
		var sub Verdict
		if err := s.Validate(); where != "" && err != nil {
			sub = Verdict{Check: cmp.Or(s.Name, s.Type), Status: VerdictError, Summary: fmt.Sprintf("%s[%d]%v", where, i, err)}
		} else {
			sub = d.check(s)
		}
		v.Children = append(v.Children, sub)
		if v.stop == nil {
			v.stop = sub.stop
		}
		switch sub.Status { // a skipped check counts for nothing
		case VerdictError:
			return v.as(VerdictError, sub.Check+": "+sub.Summary)
		case VerdictComplete:
			judged++
			if any {
				v.Status, v.Summary, v.stop = VerdictComplete, sub.Check+": "+sub.Summary, nil
				return v
			}
		case VerdictIncomplete:
			judged++
			v.Feedback = append(v.Feedback, sub.Feedback...)
			incomplete = append(incomplete, sub.Check+": "+sub.Summary)
			if !any {
				return v.as(VerdictIncomplete, incomplete[0])
			}
		}
	}
	switch {
	case judged == 0:
		return v.as(VerdictSkipped, "nothing to judge")
	case !any:
		return v.as(VerdictComplete, "all passed")
	}
	return v.as(VerdictIncomplete, "none passed ("+strings.Join(incomplete, "; ")+")")
}

// Plan item statuses (Claude Code TodoWrite and Codex update_plan share them).
const (
	PlanPending   = "pending"
	PlanCompleted = "completed"
)

// PlanItem is one item of the agent's own plan, decoded from
// {content,status} (TodoWrite), {step,status} (update_plan) or
// {text,completed} (todo_list); planFromLine fills Text and Status.
type PlanItem struct {
	Text, Status, Content, Step string
	Completed                   bool
}

// ReadPlan reads the agent's latest plan from a transcript: the last Claude
// Code TodoWrite call ({"todos":[{content,status}]}), Codex update_plan call
// ({"plan":[{step,status}]}) or Codex exec todo_list item
// ({"items":[{text,completed}]}). found is false when the transcript holds
// no plan. The file is read from the end, up to the last plan.
func ReadPlan(path string) (items []PlanItem, found bool, err error) {
	f, fi, err := agentfile.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	s := transcript.NewReverseScanner(f, fi.Size(), transcript.DefaultMaxLine)
	for s.Scan() {
		if line := s.Bytes(); bytes.Contains(line, []byte("TodoWrite")) || bytes.Contains(line, []byte("update_plan")) || bytes.Contains(line, []byte("todo_list")) {
			if p, ok := planFromLine(line); ok {
				return p, true, nil
			}
		}
	}
	return nil, false, s.Err()
}

// planSteps is a TodoWrite input ({"todos":[...]}) or update_plan's
// arguments ({"plan":[...]}); steps is nil when it holds neither.
type planSteps struct{ Todos, Plan []PlanItem }

func (p planSteps) steps() []PlanItem {
	if p.Todos != nil {
		return p.Todos
	}
	return p.Plan
}

// planFromLine decodes one transcript line that may hold a plan.
func planFromLine(line []byte) ([]PlanItem, bool) {
	var raw struct {
		Type    string
		Message struct {
			Content []struct {
				Type, Name string
				Input      planSteps
			}
		}
		Payload struct{ Type, Name, Arguments string }
		Item    struct {
			Type  string
			Items []PlanItem
		}
	}
	if json.Unmarshal(line, &raw) != nil {
		return nil, false
	}
	var steps []PlanItem
	switch {
	case raw.Type == "assistant":
		// Claude Code: a tool_use block named TodoWrite; the last one wins.
		for _, b := range slices.Backward(raw.Message.Content) {
			if b.Type == "tool_use" && b.Name == "TodoWrite" && b.Input.steps() != nil {
				steps = b.Input.steps()
				break
			}
		}
	case raw.Payload.Type == "function_call" && raw.Payload.Name == "update_plan":
		// Codex rollout: the arguments are a JSON string.
		var p planSteps
		if json.Unmarshal([]byte(raw.Payload.Arguments), &p) == nil {
			steps = p.steps()
		}
	case raw.Item.Type == "todo_list":
		// codex exec --json: item.updated / item.completed with todo_list.
		for i, t := range raw.Item.Items {
			raw.Item.Items[i].Status = map[bool]string{true: PlanCompleted, false: PlanPending}[t.Completed]
		}
		return append([]PlanItem{}, raw.Item.Items...), true
	}
	if steps == nil {
		return nil, false
	}
	for i, t := range steps {
		steps[i].Text = cmp.Or(t.Content, t.Step)
	}
	return steps, true
}
