package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/prompts"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// Env is what Decide reads besides the input, the state and the config.
type Env struct {
	Ports
	Prompt string    // the orchestration prompt, re-fed at every block ("" without an epic)
	Now    time.Time // the stop's time (Ports.Now is not read)
	// Verdicts judges through the checkers even when none are configured
	// (the built-in beads check), so the decision carries each verdict.
	Verdicts bool
}

// Input.Event values the engine tells apart.
const (
	EventCheck = "check" // runtasks check: judges without a session
	// EventRun ends a cycle of runtasks run (or comes before the first):
	// the driver starts every cycle, so a checkpoint goes on afresh.
	EventRun = "run"
)

// Driven reports whether runtasks drives this stop: an epic is set or the
// done-token contract is on, the hook is enabled, and the session has an id
// (runtasks check needs none). A stop not driven is allowed silently.
func Driven(in Input, cfg *config.Config) bool {
	return cfg.Workflow.StopHook.Enabled &&
		(in.Epic != "" || cfg.Workflow.DoneToken.Required || in.Event == EventCheck) &&
		(strings.TrimSpace(in.SessionID) != "" || in.Event == EventCheck)
}

// Decide is the decision at one stop and the session's new state. It asks
// beads only what it needs: the ready work first, the rest of the subtree
// only when nothing is ready or a completion is claimed. Its stages: the
// rules (or the checks), stuck work, the claimed tasks' RESULTS.md, the
// counters. A disabled stop hook is Stop's to answer: Decide assumes it
// is on.
func Decide(ctx context.Context, in Input, st state.State, cfg *config.Config, env Env) (Decision, state.State) {
	d := decider{ctx: ctx, in: in, st: st, cfg: cfg, env: env}
	counted, cursor := in.Usage.Since(st.UsageCursor)
	var spent *usage.Spent
	if len(counted.Models) > 0 || cursor != "" {
		s := usage.Spend(cfg.Usage.Prices, counted)
		spent = &s
		d.st.Spent = d.st.Spent.Plus(s)
	}
	d.st.UsageCursor = cmp.Or(cursor, d.st.UsageCursor)
	dec := d.decide()
	if len(d.stuck) > 0 {
		dec = d.withStuck(dec)
	}
	dec = d.results(dec)
	dec = d.unpricedBudget(dec, spent, st.Spent.Unpriced)
	if dec.Block {
		d.st.Cycles++
		if d.st.FirstBlockAt.IsZero() {
			d.st.FirstBlockAt = env.Now
		}
		d.st.LastReason = dec.Reason
		if md := cfg.Workflow.MaxDuration; md > 0 {
			dec.Deadline = d.st.FirstBlockAt.Add(md)
		}
	}
	dec.Cycle, dec.Max = d.st.Cycles, MaxCycles(d.cfg, d.in.Epic)
	if !dec.Block && dec.Outcome.Ends() {
		d.st = state.State{Session: st.Session, Epic: st.Epic, Spent: d.st.Spent, UsageCursor: d.st.UsageCursor,
			LastReason: d.st.LastReason}
	}
	// Without an epic the loop is the turn (taskmaster's contract): the done
	// line and the cap allow one stop and clear the counter, and the next
	// stop is enforced again from 1/MAX. Only a spent budget ends it for good.
	if !dec.Block && dec.Outcome.Final() && (in.Epic != "" || dec.Outcome == state.OutcomeBudget) {
		d.st.Ended, d.st.EndedAt = dec.Outcome, env.Now
	}
	d.st.UpdatedAt = env.Now
	dec.Epic, dec.Usage = in.Epic, spent
	return dec, d.st
}

// results blocks a done (or undriven) stop while a claimed task's
// RESULTS.md is still its template, at most max_cycles times.
func (d *decider) results(dec Decision) Decision {
	if dec.Block || len(d.in.Claims) == 0 || !(dec.Outcome.Done() || dec.Outcome == state.OutcomeNotDriven) {
		return dec
	}
	untouched := state.UntouchedResults(d.in.Claims)
	if len(untouched) == 0 {
		d.st.ResultsBlocks = 0
		return dec
	}
	if max := d.cfg.Workflow.StopHook.MaxCycles; max > 0 && d.st.ResultsBlocks >= max {
		d.st.ResultsBlocks = 0
		dec.SystemMessage = strings.TrimSpace(dec.SystemMessage + " " + fmt.Sprintf(
			"runtasks: %d claimed task(s) still have an unwritten RESULTS.md after %d blocks; stop allowed.", len(untouched), max))
		return dec
	}
	d.st.ResultsBlocks++
	return Decision{Block: true, Reason: state.ResultsReason(untouched), Outcome: state.OutcomeResultsMissing,
		Why: fmt.Sprintf("RESULTS.md untouched for %d claimed task(s)", len(untouched)), Counts: dec.Counts}
}

type decider struct {
	ctx context.Context
	in  Input
	st  state.State
	cfg *config.Config
	env Env

	ready    []beads.Issue
	rest     []beads.Issue // every unclosed descendant, once read
	restRead bool

	live  []LiveTask   // in-progress tasks whose worktree exists
	stuck []StuckTask  // in-progress tasks found stuck, with their action
	task  *beads.Issue // the driven issue when it is not an epic (readRest)

	beadsDecision *Decision // the beads checker's decision, the answer when every check passes
	exports       string    // shell exports run before a command check's command (VerifyTask)
}

// withStuck adds the stuck tasks, and what happens to them, to the
// decision and a word to every message.
func (d *decider) withStuck(dec Decision) Decision {
	parts := mapped(d.stuck, func(t StuckTask) string { return t.ID + " (" + t.Reason + ")" })
	verb := cmp.Or(map[string]string{StuckReopen: "reopened", StuckReport: "reported"}[d.stuck[0].Action], "set to blocked")
	sum := fmt.Sprintf("%d stuck task(s) %s: %s", len(d.stuck), verb, upTo3(parts, "; "))
	dec.Stuck = d.stuck
	dec.Why += " · " + sum
	if dec.SystemMessage != "" || !dec.Block {
		dec.SystemMessage = strings.TrimSpace(dec.SystemMessage + " runtasks: " + sum + ".")
	}
	if dec.Block && dec.Reason != "" {
		dec.Reason = "runtasks: " + sum + ".\n\n" + dec.Reason
	}
	return dec
}

func (d *decider) decide() Decision {
	switch { // a disabled stop hook is answered by Stop before it decides
	case !Driven(d.in, d.cfg):
		return Decision{Outcome: state.OutcomeNotDriven, Why: "session not driven"}
	case d.in.Subagent && d.cfg.Workflow.StopHook.SubagentStop != "drive":
		return Decision{Outcome: state.OutcomeSubagent, Why: "subagent stop allowed"}
	case d.in.BackgroundTasks > 0:
		return Decision{Outcome: state.OutcomeBackground,
			Why: fmt.Sprintf("%d background task(s) still running; the session will be woken", d.in.BackgroundTasks)}
	case d.st.Ended != "":
		return Decision{Outcome: state.OutcomeEnded,
			Why: fmt.Sprintf("the loop ended (%s) at %s; arm the session again to drive it", d.st.Ended, d.st.EndedAt.UTC().Format(time.RFC3339))}
	case d.cfg.Workflow.MaxDuration > 0 && !d.st.FirstBlockAt.IsZero() &&
		d.env.Now.Sub(d.st.FirstBlockAt) >= d.cfg.Workflow.MaxDuration:
		why := fmt.Sprintf("max_duration %s spent since the first block", d.cfg.Workflow.MaxDuration)
		return Decision{Outcome: state.OutcomeCapReached, Why: why, SystemMessage: "runtasks: " + why + "; stop allowed."}
	}
	if dec, spent := d.budget(); spent {
		return dec
	}
	if len(d.cfg.Workflow.Checks) > 0 || d.env.Verdicts {
		return d.withChecks()
	}
	return d.rules()
}

// budget allows the stop, checks skipped, once workflow.budget is spent by
// the session's loop or every loop on the epic (this stop included).
func (d *decider) budget() (Decision, bool) {
	b := d.cfg.Workflow.Budget
	s := d.st.Spent
	epic := s.Plus(d.in.OthersSpent[d.in.Epic]) // read only with an epic
	var spent string
	switch {
	case b.SessionTokens > 0 && s.Total() >= int64(b.SessionTokens):
		spent = fmt.Sprintf("session budget spent: %s of %s tokens", usage.FormatTokens(s.Total()), usage.FormatTokens(int64(b.SessionTokens)))
	case b.SessionCost > 0 && s.Cost >= b.SessionCost:
		spent = fmt.Sprintf("session budget spent: %s of %s", usage.FormatCost(s.Cost), usage.FormatCost(b.SessionCost))
	case d.in.Epic != "" && b.EpicTokens > 0 && epic.Total() >= int64(b.EpicTokens):
		spent = fmt.Sprintf("epic %s budget spent: %s of %s tokens", d.in.Epic, usage.FormatTokens(epic.Total()), usage.FormatTokens(int64(b.EpicTokens)))
	case d.in.Epic != "" && b.EpicCost > 0 && epic.Cost >= b.EpicCost:
		spent = fmt.Sprintf("epic %s budget spent: %s of %s", d.in.Epic, usage.FormatCost(epic.Cost), usage.FormatCost(b.EpicCost))
	default:
		return Decision{}, false
	}
	return Decision{Outcome: state.OutcomeBudget, Why: spent + "; checks skipped",
		SystemMessage: "runtasks: " + spent + " (workflow.budget); stop allowed with the checks skipped. " +
			"A person decides: raise the budget or arm the session again."}, true
}

// unpricedBudget says, once per loop and only when a cost budget is set,
// that tokens of a model without a price keep it from being enforced.
func (d *decider) unpricedBudget(dec Decision, spent *usage.Spent, unpricedBefore int64) Decision {
	b := d.cfg.Workflow.Budget
	if (b.SessionCost == 0 && b.EpicCost == 0) || spent == nil || spent.Unpriced == 0 || unpricedBefore > 0 {
		return dec
	}
	models := cmp.Or(strings.Join(usage.Unpriced(d.cfg.Usage.Prices, spent.Models), ", "), "a model not named")
	msg := "the cost budget (workflow.budget) cannot be enforced: no price for " + models + " (usage.prices)"
	dec.Why += " · " + msg
	dec.SystemMessage = strings.TrimSpace(dec.SystemMessage + " runtasks: " + msg + ".")
	return dec
}

// rules are the stop hook's rules: the epic's work in beads, else the
// TASKMASTER_DONE contract alone.
func (d *decider) rules() Decision {
	if d.in.Epic != "" {
		return d.withEpic()
	}
	if HasDoneToken(d.in.FinalMessage, d.cfg.Workflow.DoneToken.Prefix, d.in.SessionID) {
		return Decision{Outcome: state.OutcomeTokenDone, Why: "done token printed"}
	}
	return d.block(Decision{Outcome: state.OutcomeTokenMissed, Why: "done token not printed",
		Reason: d.tokenReason("the done line has not been printed")})
}

// withChecks runs workflow.checks in order (all must pass). The beads
// checker's own block, escalation or error is the answer as without checks;
// another checker's incomplete verdict blocks with its feedback. The
// decision carries each check's verdict.
func (d *decider) withChecks() (dec Decision) {
	if max := MaxCycles(d.cfg, d.in.Epic); max > 0 && d.st.Cycles >= max {
		why := fmt.Sprintf("max cycles reached (%d/%d); checks skipped", d.st.Cycles, max)
		return Decision{Outcome: state.OutcomeCapReached, Why: why, SystemMessage: "runtasks: " + why + "; stop allowed."}
	}
	specs := d.cfg.Workflow.Checks
	if len(specs) == 0 { // runtasks check without workflow.checks: the stop hook's rules
		specs = []config.CheckSpec{{Type: "beads"}}
	}
	top := d.checkAll(Verdict{Check: "checks"}, false, specs, "workflow.checks")
	defer func() { dec.Verdicts = top.Children }()
	if top.stop != nil && top.Status != VerdictComplete {
		return *top.stop
	}
	var counts state.Counts
	if d.beadsDecision != nil {
		counts = d.beadsDecision.Counts
	}
	switch top.Status {
	case VerdictError:
		return Decision{Outcome: state.OutcomeCheckError, Why: "check error: " + top.Summary, Counts: counts,
			SystemMessage: "runtasks: a completion check could not run (" + top.Summary + "); stop allowed."}
	case VerdictIncomplete:
		reason := "runtasks: not done yet: " + top.Summary
		if fb := FeedbackText(top.Feedback, d.cfg.Workflow.FeedbackLimit); len(fb) > 0 {
			reason += ":\n- " + strings.Join(fb, "\n- ")
		}
		switch { // the prompt, or the done-token instructions
		case d.in.Epic != "" && d.env.Prompt != "":
			reason += "\n\n" + d.env.Prompt
		case d.in.Epic == "" && d.cfg.Workflow.DoneToken.Required:
			reason += "\n\n" + d.tokenInstructions()
		}
		return d.block(Decision{Outcome: state.OutcomeIncomplete, Why: "check incomplete: " + OneLine(top.Summary, 200), Counts: counts,
			Reason: reason + "\n\nruntasks: " + d.cycleLabel() + " · check " + top.Summary})
	case VerdictSkipped:
		return Decision{Outcome: state.OutcomeNotDriven, Why: "no check had anything to judge", Counts: counts}
	}
	if d.beadsDecision != nil {
		dec = *d.beadsDecision
		dec.Why += "; all checks passed"
		return dec
	}
	return Decision{Outcome: state.OutcomeComplete, Why: "all checks passed", Counts: counts,
		SystemMessage: "runtasks: every completion check passed."}
}

func (d *decider) withEpic() Decision {
	claims := FindPromises(d.in.FinalMessage, d.promises())
	dt := d.cfg.Workflow.DoneToken

	var err error
	if d.ready, err = d.env.Beads.Ready(d.ctx, d.in.Epic); err != nil {
		return d.beadsError(err)
	}
	// The common case: ready work remains, nothing is claimed. One query decides.
	if len(d.ready) > 0 && d.cfg.Workflow.StopHook.CheckReadyTasks && len(claims) == 0 && !dt.Required {
		return d.keepGoing(state.Counts{Ready: len(d.ready), InProgress: -1, Blocked: -1, Deferred: -1, Open: -1, Remaining: -1})
	}

	if err := d.readRest(); err != nil {
		return d.beadsError(err)
	}
	d.handleStuck()
	c := d.counts()
	if c.Ready+c.InProgress == 0 && c.Open > 0 {
		// Open work neither ready nor waiting: the two reads raced a change
		// (a blocker closed in between). Ask again rather than escalate.
		if d.ready, err = d.env.Beads.Ready(d.ctx, d.in.Epic); err != nil {
			return d.beadsError(err)
		}
		c = d.counts()
	}

	// Under the done-token contract the done line is the only way out
	// (and beads must agree): a promise alone never ends the loop.
	if dt.Required && !HasDoneToken(d.in.FinalMessage, dt.Prefix, d.in.SessionID) {
		status := fmt.Sprintf("%d ready, %d in progress, %d remain under %s", c.Ready, c.InProgress, c.Remaining, d.in.Epic)
		if c.Remaining == 0 {
			status = "beads shows " + d.in.Epic + " complete; the done line has not been printed"
		}
		return d.block(Decision{Outcome: state.OutcomeTokenMissed, Why: "done token not printed", Counts: c,
			Reason: d.tokenReason(status)})
	}
	if dt.Required {
		dec := d.settle(c, "done token printed and beads agrees", fmt.Sprintf("done token rejected: %d remain", c.Remaining),
			"done token printed; only blocked or deferred work remains")
		if c.Remaining == 0 {
			dec.Outcome = state.OutcomeTokenDone
		}
		return dec
	}
	for _, p := range claims {
		if dec, ok := d.judge(p, c); ok {
			return dec
		}
	}
	return d.noClaim(c)
}

// promises lists the configured promises whose condition is on.
func (d *decider) promises() []config.Promise {
	return slices.DeleteFunc(d.cfg.Promises(), func(p config.Promise) bool { return !d.cfg.AllowsExitOn(p.Condition) })
}

// judge decides on one claimed promise. ok is false when the claim neither
// ends nor blocks the stop by itself (the next claim or rule decides).
func (d *decider) judge(p config.Promise, c state.Counts) (Decision, bool) {
	switch p.Condition {
	case config.CondAlways:
		return Decision{Outcome: state.OutcomeAccepted, Why: fmt.Sprintf("promise %q accepted", p.Text), Counts: c}, true
	case config.CondAllComplete:
		return d.settle(c, fmt.Sprintf("promise %q confirmed by beads", p.Text), fmt.Sprintf("completion rejected: %d remain", c.Remaining),
			fmt.Sprintf("promise %q: only blocked or deferred work remains", p.Text)), true
	case config.CondAllBlocked:
		return d.settle(c, "nothing remains", fmt.Sprintf("blocked claim rejected: %d ready, %d in progress", c.Ready, c.InProgress),
			fmt.Sprintf("promise %q confirmed: all remaining work is blocked", p.Text)), true
	case config.CondContextCheckpoint:
		if !d.cfg.Workflow.StopHook.CheckpointRequiresClean || d.env.Uncommitted == nil {
			return d.checkpoint(c, "context checkpoint accepted"), true
		}
		dirty, err := d.env.Uncommitted(d.ctx)
		if err != nil {
			// Not a git work tree, or git failed: cannot check; do not trap the agent.
			return d.checkpoint(c, "context checkpoint accepted (git status unavailable: "+OneLine(err.Error(), 120)+")"), true
		}
		dirty = d.cfg.OwnFiles(dirty) // runtasks' own files are not the agent's work
		if len(dirty) == 0 {
			return d.checkpoint(c, "context checkpoint accepted: work committed"), true
		}
		head := fmt.Sprintf("checkpoint rejected: commit your work first (%d uncommitted: %s)",
			len(dirty), strings.Join(firstN(dirty, 3), ", "))
		return d.block(Decision{Outcome: state.OutcomeRejected, Why: head, Counts: c,
			Reason: head + "\n\n" + d.env.Prompt + "\n\n" + d.stateLine(c)}), true
	}
	return Decision{}, false
}

// settle answers a claim that the work is done: complete when nothing
// remains, rejected while work is ready or in progress, else escalated.
func (d *decider) settle(c state.Counts, done, rejected, waiting string) Decision {
	switch {
	case c.Remaining == 0:
		return d.complete(c, done)
	case c.Ready+c.InProgress > 0:
		return d.block(Decision{Outcome: state.OutcomeRejected, Why: rejected, Counts: c,
			Reason: rejected + ":\n- " + upTo3(issueLines(d.activeIssues(), ""), "\n- ") + "\n\n" + d.env.Prompt + "\n\n" + d.stateLine(c)})
	}
	return d.escalate(c, waiting)
}

// noClaim applies the default rules when nothing (valid) is claimed.
func (d *decider) noClaim(c state.Counts) Decision {
	sh := d.cfg.Workflow.StopHook
	switch {
	case c.Remaining == 0:
		return d.complete(c, "no work remains")
	case (c.Ready > 0 && sh.CheckReadyTasks) || (c.InProgress > 0 && sh.CheckInProgress):
		return d.keepGoing(c)
	case c.Ready+c.InProgress == 0:
		return d.escalate(c, "all remaining work is blocked or deferred")
	default:
		why := fmt.Sprintf("work remains (%d ready, %d in progress) but the stop hook's checks are off", c.Ready, c.InProgress)
		return Decision{Outcome: state.OutcomeEscalated, Why: why, Counts: c, SystemMessage: "runtasks: " + why + "."}
	}
}

// keepGoing blocks while work remains (counts -1: not read).
func (d *decider) keepGoing(counts state.Counts) Decision {
	why := fmt.Sprintf("%d ready", counts.Ready)
	if counts.InProgress > 0 {
		why += fmt.Sprintf(", %d in progress", counts.InProgress)
	}
	reason := d.env.Prompt + "\n\n" + d.stateLine(counts)
	if len(d.live) > 0 { // tell the orchestrator to wait for the tasks worked in their worktrees
		lines := mapped(d.live, func(l LiveTask) string { return l.ID + " " + l.Where })
		reason = "In progress in their worktrees (wait for each, then verify its work and merge it):\n- " + upTo3(lines, "\n- ") + "\n\n" + reason
		why += fmt.Sprintf(" (%d in worktrees)", len(d.live))
	}
	return d.block(Decision{Outcome: state.OutcomeContinue, Why: "work remains: " + why, Counts: counts, Reason: reason})
}

func (d *decider) complete(c state.Counts, why string) Decision {
	if d.task != nil {
		return Decision{Outcome: state.OutcomeComplete, Why: why + ": task " + d.task.ID + " is closed", Counts: c,
			SystemMessage: fmt.Sprintf("runtasks: task %s is closed.", d.task.ID)}
	}
	return Decision{Outcome: state.OutcomeComplete, Why: why, Counts: c,
		SystemMessage: fmt.Sprintf("runtasks: epic %s complete: every task is closed.", d.in.Epic)}
}

// checkpoint accepts a context checkpoint: the person resumes the session;
// under runtasks run the loop goes on at once in a fresh context (a cycle).
func (d *decider) checkpoint(c state.Counts, why string) Decision {
	if d.in.Event == EventRun {
		return d.block(Decision{Outcome: state.OutcomeCheckpoint, Why: why + "; going on in a fresh context", Counts: c,
			Fresh: true, Reason: d.env.Prompt + "\n\n" + d.stateLine(c)})
	}
	return Decision{Outcome: state.OutcomeCheckpoint, Why: why, Counts: c,
		SystemMessage: "runtasks: " + why + "; resume the session to continue " + d.in.Epic + "."}
}

func (d *decider) escalate(c state.Counts, why string) Decision {
	waiting := d.waitingIssues()
	names := mapped(waiting, func(is beads.Issue) string {
		why := is.Status
		if len(is.BlockedBy) > 0 {
			why = "blocked by " + strings.Join(firstN(is.BlockedBy, 3), ", ")
		}
		return is.ID + " " + OneLine(is.Title, 60) + " (" + why + ")"
	})
	return Decision{Outcome: state.OutcomeEscalated, Why: why, Counts: c, SystemMessage: fmt.Sprintf(
		"runtasks: %s needs a person: %d task(s) blocked or deferred: %s", d.in.Epic, len(waiting), upTo3(names, "; "))}
}

func (d *decider) beadsError(err error) Decision {
	msg := OneLine(err.Error(), 400)
	why := "beads error: " + msg
	if d.cfg.Workflow.StopHook.OnBeadsError == "block" {
		return d.block(Decision{Outcome: state.OutcomeBeadsError, Why: why,
			Reason: "runtasks could not read beads for " + d.in.Epic + ": " + msg +
				"\nFix the tracker (run `bd ready --parent " + d.in.Epic + "` to see the error), then go on.\n\n" +
				d.env.Prompt + "\n\nruntasks: " + d.cycleLabel() + " · beads error"})
	}
	return Decision{Outcome: state.OutcomeBeadsError, Why: why,
		SystemMessage: "runtasks: could not read beads, stop allowed: " + msg}
}

// block enforces the cycle caps and the no-progress rule on an intended block.
func (d *decider) block(dec Decision) Decision {
	dec.Block = true
	if max := MaxCycles(d.cfg, d.in.Epic); max > 0 && d.st.Cycles >= max {
		why := fmt.Sprintf("max cycles reached (%d/%d)", d.st.Cycles, max)
		return Decision{Outcome: state.OutcomeCapReached, Why: why, Counts: dec.Counts,
			SystemMessage: fmt.Sprintf("runtasks: %s; stop allowed with work left (%s).", why, dec.Why)}
	}
	// The no-progress rule watches beads; a failing check (tests being
	// fixed) is bounded by max_cycles and max_duration instead.
	if dec.Outcome == state.OutcomeBeadsError || dec.Outcome == state.OutcomeIncomplete || d.in.Epic == "" {
		return dec
	}
	return d.progress(dec)
}

// progress applies the no-progress rule: beads has not moved when the
// epic's unclosed subtree (ids, statuses, update times) is unchanged. On
// the one-query path the ready list stands in, and the subtree is read
// before a warning or a release.
func (d *decider) progress(dec Decision) Decision {
	n := d.cfg.Workflow.NoProgressCycles
	readyFP := fingerprint(d.ready)
	moved := readyFP != d.st.ReadyFingerprint
	if d.restRead {
		full := fingerprint(d.rest)
		moved = moved || (d.st.Fingerprint != "" && full != d.st.Fingerprint)
		d.st.Fingerprint = full
	}
	d.st.ReadyFingerprint = readyFP
	if moved {
		d.st.Unchanged, d.st.NoProgressWarned = 0, false
		return dec
	}
	d.st.Unchanged++
	if n <= 0 || d.st.Unchanged < n {
		return dec
	}
	// The ready list looks stale: confirm with the whole subtree before
	// calling it a stall (an agent may be changing in-progress work).
	if !d.restRead {
		if err := d.readRest(); err != nil {
			return dec
		}
		full := fingerprint(d.rest)
		if full != d.st.Fingerprint {
			d.st.Fingerprint = full
			d.st.Unchanged = n - 1
			return dec
		}
	}
	if !d.st.NoProgressWarned {
		d.st.NoProgressWarned = true
		why := fmt.Sprintf("no progress: beads unchanged for %d blocks", d.st.Unchanged)
		dec.Outcome = state.OutcomeNoProgress
		dec.Why = why
		dec.Reason = fmt.Sprintf("runtasks: no progress: the beads state of %s has not changed for %d cycles.\n"+
			"If you are stuck, say so now: for each task you cannot move, run "+
			"`bd update <id> --status blocked --append-notes \"<what it needs>\"` and report the blockers. "+
			"If you can move, close or update a task now.\n\n%s", d.in.Epic, d.st.Unchanged, d.stateLine(dec.Counts))
		return dec
	}
	why := fmt.Sprintf("no progress: beads unchanged for %d blocks after a warning", d.st.Unchanged)
	return Decision{Outcome: state.OutcomeNoProgress, Why: why, Counts: dec.Counts,
		SystemMessage: "runtasks: " + why + "; stop allowed. " + d.in.Epic + " needs a look from a person."}
}

// MaxCycles is the cap of a loop on epic ("" for the done-token contract
// without an epic): max_cycles, or the done token's smaller cap; 0 = none.
func MaxCycles(cfg *config.Config, epic string) int {
	max := cfg.Workflow.StopHook.MaxCycles
	if epic == "" {
		max = 0
	}
	if t := cfg.Workflow.DoneToken; t.Required && t.Max > 0 && (max == 0 || t.Max < max) {
		max = t.Max
	}
	return max
}

func (d *decider) readRest() error {
	if d.restRead {
		return nil
	}
	rest, err := d.env.Beads.Subtree(d.ctx, d.in.Epic)
	if err != nil {
		return err
	}
	if len(rest) == 0 && len(d.ready) == 0 {
		// ready --parent returns [] for an unknown epic and for a task. A
		// task (/run-tasks <task>) is done when it is closed itself.
		is, err := d.env.Beads.Show(d.ctx, d.in.Epic)
		if err != nil {
			return fmt.Errorf("epic %s: %w", d.in.Epic, err)
		}
		if is.IssueType != beads.TypeEpic {
			d.task = &is
			d.env.Prompt = prompts.RunTask(is.ID)
			if is.Status != beads.StatusClosed {
				for _, dep := range is.Dependencies {
					if dep.Type == beads.DepBlocks && dep.Status != beads.StatusClosed {
						is.BlockedBy = append(is.BlockedBy, dep.DependsOnID)
					}
				}
				rest = []beads.Issue{is}
				if is.Status == beads.StatusOpen && !is.Blocked() {
					d.ready = rest
				}
			}
		}
	}
	d.rest, d.restRead = rest, true
	return nil
}

// Class sorts one unclosed issue into a Counts bucket: "ready" (its id in
// ready), "in_progress", "blocked", "deferred" or "open".
func Class(is beads.Issue, ready map[string]bool) string {
	switch {
	case ready[is.ID]:
		return "ready"
	case is.Status == beads.StatusInProgress || is.Status == beads.StatusHooked:
		return "in_progress"
	case is.Blocked():
		return "blocked"
	case is.Status == beads.StatusDeferred || is.Status == beads.StatusPinned:
		return "deferred"
	}
	return "open"
}

// readySet is the ready ids: a set, since an epic's lists can be
// thousands long.
func (d *decider) readySet() map[string]bool {
	ready := make(map[string]bool, len(d.ready))
	for _, is := range d.ready {
		ready[is.ID] = true
	}
	return ready
}

// restOf lists the unclosed issues of the subtree in the given classes.
func (d *decider) restOf(classes ...string) []beads.Issue {
	ready := d.readySet()
	return slices.DeleteFunc(slices.Clone(d.rest), func(is beads.Issue) bool { return !slices.Contains(classes, Class(is, ready)) })
}

func (d *decider) counts() state.Counts {
	c, ready := state.Counts{Ready: len(d.ready)}, d.readySet()
	for _, is := range d.rest {
		switch Class(is, ready) {
		case "in_progress":
			c.InProgress++
		case "blocked":
			c.Blocked++
		case "deferred":
			c.Deferred++
		case "open":
			c.Open++
		}
	}
	// Ready issues come from the ready query, so one closed between the two
	// queries still counts: a race errs towards going on, never towards done.
	c.Remaining = c.Ready + c.InProgress + c.Blocked + c.Deferred + c.Open
	return c
}

// activeIssues lists ready then in-progress issues.
func (d *decider) activeIssues() []beads.Issue {
	return append(slices.Clone(d.ready), d.restOf("in_progress")...)
}

// waitingIssues lists what is neither ready nor in progress.
func (d *decider) waitingIssues() []beads.Issue { return d.restOf("blocked", "deferred", "open") }

// issueLines are "ID title [status]" lines, each followed by tail.
func issueLines(issues []beads.Issue, tail string) []string {
	return mapped(issues, func(is beads.Issue) string {
		return is.ID + " " + OneLine(is.Title, 80) + " [" + is.Status + "]" + tail
	})
}

// cycleLabel is "cycle N/MAX" for the block being made ("cycle N" uncapped).
func (d *decider) cycleLabel() string {
	if max := MaxCycles(d.cfg, d.in.Epic); max > 0 {
		return fmt.Sprintf("cycle %d/%d", d.st.Cycles+1, max)
	}
	return fmt.Sprintf("cycle %d", d.st.Cycles+1)
}

// stateLine is the short line appended to every block reason. Its size does
// not grow with the number of tasks or cycles.
func (d *decider) stateLine(c state.Counts) string {
	parts := []string{"runtasks: " + d.cycleLabel(), fmt.Sprintf("%d ready", c.Ready)}
	if n := min(d.cfg.Workflow.StopHook.NextIDs, len(d.ready)); n > 0 {
		ids := mapped(d.ready[:n], func(is beads.Issue) string { return is.ID })
		parts[1] += " (next: " + strings.Join(ids, ", ") + ")"
	}
	if c.Remaining >= 0 {
		parts = append(parts, fmt.Sprintf("%d in progress", c.InProgress), fmt.Sprintf("%d blocked", c.Blocked))
		if c.Deferred > 0 {
			parts = append(parts, fmt.Sprintf("%d deferred", c.Deferred))
		}
		parts = append(parts, fmt.Sprintf("%d remain", c.Remaining))
	}
	return strings.Join(parts, " · ")
}

// tokenReason is the brief TASKMASTER block reason. It never contains the
// done line, so an echo of it in the transcript cannot satisfy the contract.
func (d *decider) tokenReason(status string) string {
	s := "TASKMASTER (" + strings.TrimPrefix(d.cycleLabel(), "cycle ") + "): stop blocked. "
	if d.in.ToolErrors {
		s += "Errors were detected in the latest tool results. "
	}
	s += "Status: " + status + ".\n" + d.tokenInstructions()
	if d.in.Epic != "" {
		s += "\n\n" + d.env.Prompt
	}
	return s
}

// tokenInstructions tell the agent how to end, never spelling the done line.
func (d *decider) tokenInstructions() string {
	return "Before stopping, go through the completion checklist (skill completion-checklist): " +
		"re-read the user's messages, the task list, the plan, errors, loose ends, blockers, and check honestly.\n" +
		fmt.Sprintf("When, and only when, everything is truly done, print one line made of %s, then two colons, then your session id %s, with nothing else on that line.",
			d.cfg.Workflow.DoneToken.Prefix, d.in.SessionID)
}

// fingerprint hashes ids, statuses and update times.
func fingerprint(issues []beads.Issue) string {
	rows := make([]string, 0, len(issues))
	for _, is := range issues {
		rows = append(rows, is.ID+"\x00"+is.Status+"\x00"+is.UpdatedAt.UTC().Format(time.RFC3339Nano)+"\n")
	}
	slices.Sort(rows)
	sum := sha256.Sum256([]byte(strings.Join(rows, "")))
	return hex.EncodeToString(sum[:8])
}

func firstN[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// mapped is f of each item of s, in order (nil for none).
func mapped[T, U any](s []T, f func(T) U) []U {
	var out []U
	for _, x := range s {
		out = append(out, f(x))
	}
	return out
}

// upTo3 joins the first three items with sep, then says how many more there are.
func upTo3(items []string, sep string) string { return strings.Join(FeedbackText(items, 3), sep) }

// OneLine collapses s to one line of at most n runes, cut with "…".
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// NewRecord is the decision-log entry for one decision.
func NewRecord(in Input, epic string, d Decision, now time.Time) state.Record {
	r := state.Record{Time: now, Session: in.SessionID, Epic: epic, Agent: in.Agent, Event: in.Event, Outcome: d.Outcome,
		Block: d.Block, Cycle: d.Cycle, Max: d.Max, Why: d.Why, Actions: d.Actions, Usage: d.Usage, Task: state.LatestClaim(in.Claims)}
	// Zero counts are real after a completion (beads was read and showed
	// nothing); elsewhere they mean beads was not read.
	complete := d.Outcome == state.OutcomeComplete || (d.Outcome == state.OutcomeTokenDone && epic != "" && epic != state.NoEpic)
	if d.Counts != (state.Counts{}) || complete {
		c := d.Counts
		r.Counts = &c
	}
	return r
}
