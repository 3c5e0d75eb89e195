package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/state"
)

// VerifyChecks are the checks a task must pass (workflow.verify): the
// first override naming its issue type or one of its labels, else
// workflow.verify.checks; then, with task_commands, its own command (bd
// metadata verify).
func VerifyChecks(cfg *config.Config, is beads.Issue) []config.CheckSpec {
	specs, overrides := cfg.Workflow.Verify.Checks, cfg.Workflow.Verify.Overrides
	if i := slices.IndexFunc(overrides, func(o config.VerifyOverride) bool {
		return o.IssueType != "" && o.IssueType == is.IssueType || o.Label != "" && slices.Contains(is.Labels, o.Label)
	}); i >= 0 {
		specs = overrides[i].Checks
	}
	if run := is.VerifyCommand(); run != "" && cfg.Workflow.Verify.TaskCommands {
		specs = append(slices.Clip(specs), config.CheckSpec{Type: "command", Name: "task " + is.ID, Run: run,
			Timeout: config.DefaultCheckTimeout, TailLines: 20})
	}
	return specs
}

// Verification is a task's checks' verdict where it is worked (its
// worktree, or the project root) at Commit.
type Verification struct {
	Task beads.Issue
	Verdict
	Commit string
	Checks []string
}

// Passed reports whether every check passed (or none applied).
func (v Verification) Passed() bool {
	return v.Status == VerdictComplete || v.Status == VerdictSkipped
}

// Failure is what the agent is told: the failing check, its output's tail.
func (v Verification) Failure() string {
	msg := v.Task.ID + ": checks failed: " + v.Summary
	for _, f := range v.Feedback {
		if _, tail, ok := strings.Cut(f, "; the end of its output:\n"); ok {
			f = "the end of its output:\n" + tail
		}
		msg += "\n" + f
	}
	return msg
}

// Record is the verification in the decision log.
func (v Verification) Record(in Input, epic string, now time.Time) state.Record {
	r := state.Record{Time: now, Session: in.SessionID, Epic: epic, Agent: in.Agent, Event: in.Event,
		Outcome: state.OutcomeVerified, Why: v.Task.ID + " verified: " + v.Summary, Task: v.Task.ID, Commit: v.Commit, Checks: v.Checks}
	if !v.Passed() {
		r.Outcome, r.Why = state.OutcomeCloseDenied, v.Task.ID+" not closed: "+v.Summary
	}
	return r
}

// VerifyTask runs the task's checks, each command in its own process group
// with RUNTASKS_TASK_ID, RUNTASKS_TASK_TITLE and RUNTASKS_TASK_WORKTREE set,
// in the task's worktree when it has one.
func VerifyTask(ctx context.Context, cfg *config.Config, p Ports, is beads.Issue) Verification {
	v := Verification{Task: is}
	commit, worktree := taskPlace(ctx, cfg, p, is.ID)
	c := *cfg
	c.Root, v.Commit = cmp.Or(worktree, cfg.Root), commit
	d := &decider{ctx: ctx, cfg: &c, env: Env{Ports: p}, exports: fmt.Sprintf("export RUNTASKS_TASK_ID=%s RUNTASKS_TASK_TITLE=%s RUNTASKS_TASK_WORKTREE=%s\n",
		config.ShellQuote(is.ID), config.ShellQuote(is.Title), config.ShellQuote(worktree))}
	specs := VerifyChecks(cfg, is)
	v.Checks = mapped(specs, func(s config.CheckSpec) string { return s.Name + "=" + s.Type })
	v.Verdict = d.checkAll(Verdict{Check: "verify"}, false, specs, "")
	return v
}

// taskPlace is the commit checked out where a task is worked, and its
// worktree ("": it is worked in the project root).
func taskPlace(ctx context.Context, cfg *config.Config, p Ports, id string) (commit, worktree string) {
	if p.Worktrees == nil {
		return "", ""
	}
	if wts, err := p.Worktrees(ctx); err == nil && len(wts) > 0 {
		if wt, ok := findWorktree(wts, cfg.Root, cfg.Workflow.Worktrees.Pattern, id); ok {
			return wt.Head, wt.Path
		}
		return wts[0].Head, ""
	}
	return "", ""
}

// worktreesOnce lists the worktrees once for the several tasks the audit
// places and verifies (a git worktree list each).
func worktreesOnce(ctx context.Context, p Ports) Ports {
	if p.Worktrees != nil {
		wts, err := p.Worktrees(ctx)
		p.Worktrees = func(context.Context) ([]git.Worktree, error) { return wts, err }
	}
	return p
}

// GateRequest is a shell command a driven session's agent is about to run
// that would close Closes.
type GateRequest struct {
	Input        Input
	EpicFromFlag bool
	Closes       []string
	// Worker is a runtasks run worker's task (RUNTASKS_TASK): its close is
	// gated whatever the session's epic.
	Worker string
}

// Gate runs the checks of every task of the session's epic the command
// would close, recording each verification; deny is the first failure
// ("": allow). Sessions runtasks does not drive, and tasks outside the
// epic or already closed, are never gated.
func Gate(ctx context.Context, s *state.Store, cfg *config.Config, req GateRequest, p Ports) (deny string, err error) {
	if !cfg.Workflow.Verify.On() {
		return "", nil
	}
	in := req.Input
	_, in.Epic = resolveEpic(s, cfg, in, req.EpicFromFlag)
	var tasks []beads.Issue
	switch {
	case req.Worker != "" && slices.Contains(req.Closes, req.Worker):
		is, err := p.Beads.Show(ctx, req.Worker)
		if err != nil {
			return "", err
		}
		in.Epic, tasks = is.Parent, []beads.Issue{is}
	case in.Epic == "" || !Driven(in, cfg):
		return "", nil
	default:
		if _, tasks, err = p.Beads.Descendants(ctx, in.Epic); err != nil {
			return "", err
		}
	}
	for _, is := range tasks {
		if !slices.Contains(req.Closes, is.ID) || is.Status == beads.StatusClosed {
			continue
		}
		v := VerifyTask(ctx, cfg, p, is)
		if err := s.Append(v.Record(in, in.Epic, p.Now())); err != nil {
			s.Warnf("decision log: %v", err)
		}
		if !v.Passed() {
			return v.Failure() + "\nFix it and try again: runtasks runs these checks first.", nil
		}
	}
	return "", nil
}

// resolveEpic is the session's binding and the epic a stop is judged
// against: --epic > the binding > the configuration.
func resolveEpic(s *state.Store, cfg *config.Config, in Input, fromFlag bool) (state.Binding, string) {
	b, err := s.Binding(in.SessionID) // none without a session id
	if err != nil && in.SessionID != "" {
		s.Warnf("session binding unreadable; judging without it: %v", err)
	}
	if !fromFlag && b.Epic != "" {
		return b, b.Epic
	}
	return b, cfg.Workflow.Epic
}

// audit is the stop's check of the epic's tasks closed since the previous
// decision (st.AuditFrom, else the arming, else the session's or the epic's
// last decision, else ever) without a passing verification at their
// commit: at most max_per_stop run.
type audit struct {
	failed   []string // each failed verification's Failure
	reopened []string
	deferred int
	from     time.Time // the next AuditFrom
}

func runAudit(ctx context.Context, s *state.Store, cfg *config.Config, in Input, st state.State, armed time.Time, env Env) (a audit) {
	a.from = env.Now
	from := st.AuditFrom
	switch {
	case !from.IsZero():
	case !armed.IsZero():
		from = armed
	case st.Last != nil:
		from = st.Last.Time
	default: // the epic's previous decision, by any session; none: every close
		recs, _ := s.Records(state.RecordFilter{Epic: in.Epic, Limit: 500})
		for _, r := range recs {
			if r.Outcome != state.OutcomeVerified && r.Outcome != state.OutcomeCloseDenied {
				from = r.Time
			}
		}
	}
	_, tasks, err := env.Beads.Descendants(ctx, in.Epic)
	if err != nil {
		s.Warnf("verify: could not list the epic's tasks; audited at the next stop: %v", err)
		a.from = from
		return a
	}
	tasks = slices.DeleteFunc(tasks, func(is beads.Issue) bool {
		return is.Status != beads.StatusClosed || is.ClosedAt.Before(from) || is.IssueType == beads.TypeEpic
	})
	if len(tasks) == 0 {
		return a
	}
	recs, err := s.Records(state.RecordFilter{Epic: in.Epic, Limit: 5000})
	if err != nil {
		s.Warnf("verify: %v", err)
	}
	todo, ports := 0, worktreesOnce(ctx, env.Ports)
	for _, is := range tasks {
		commit, _ := taskPlace(ctx, cfg, ports, is.ID)
		if slices.ContainsFunc(recs, func(r state.Record) bool {
			return r.Outcome == state.OutcomeVerified && r.Task == is.ID && r.Commit == commit
		}) {
			continue
		}
		if todo++; todo > cfg.Workflow.Verify.MaxPerStop {
			a.deferred++
			continue
		}
		v := VerifyTask(ctx, cfg, ports, is)
		if v.Passed() {
			if err := s.Append(v.Record(in, in.Epic, env.Now)); err != nil {
				s.Warnf("decision log: %v", err)
			}
			continue
		}
		failure := v.Failure()
		a.failed = append(a.failed, failure)
		if cfg.Workflow.Verify.OnUnverified == "reopen" && env.Updater != nil {
			if _, err := env.Updater.SetStatus(ctx, is.ID, beads.StatusOpen); err != nil {
				s.Warnf("verify: could not reopen %s: %v", is.ID, err)
				continue
			}
			_, _ = env.Updater.AppendNotes(ctx, is.ID, "runtasks reopened it: closed without passing its checks.\n"+failure)
			a.reopened = append(a.reopened, is.ID)
		}
	}
	if a.deferred > 0 || len(a.failed) > 0 && cfg.Workflow.Verify.OnUnverified == "block" {
		a.from = from
	}
	return a
}

// apply makes the audit part of the stop's decision; prev is the state before it.
func (a audit) apply(cfg *config.Config, dec Decision, next *state.State, prev state.State) Decision {
	if a.deferred > 0 {
		dec.SystemMessage = joinLines(dec.SystemMessage, fmt.Sprintf("runtasks: %d closed task(s) wait for verification until the next stop (workflow.verify.max_per_stop %d).", a.deferred, cfg.Workflow.Verify.MaxPerStop))
	}
	next.AuditFrom = a.from
	if len(a.failed) == 0 {
		return dec
	}
	msg := "Closed without passing its checks:\n" + strings.Join(a.failed, "\n")
	outcome := state.OutcomeUnverified
	if len(a.reopened) > 0 {
		msg = "runtasks reopened " + strings.Join(a.reopened, ", ") + ". " + msg
		outcome = state.OutcomeReopened
		for _, id := range a.reopened {
			dec.Actions = append(dec.Actions, "reopened "+id+": closed without passing its checks")
		}
	}
	warn := cfg.Workflow.Verify.OnUnverified == "warn"
	switch {
	case !warn && dec.Block:
		dec.Outcome, dec.Reason, dec.Why = outcome, msg+"\n\n"+dec.Reason, OneLine(msg, 300)
	case !warn && (dec.Outcome.Done() || dec.Outcome == state.OutcomeEscalated) && (dec.Max == 0 || prev.Cycles+1 < dec.Max):
		// The stop would end the loop on work that fails its checks.
		spent, cursor := next.Spent, next.UsageCursor
		*next = prev
		next.AuditFrom, next.Cycles, next.Spent, next.UsageCursor = a.from, prev.Cycles+1, spent, cursor
		dec = Decision{Block: true, Outcome: outcome, Reason: msg, Why: OneLine(msg, 300), Epic: dec.Epic, Counts: dec.Counts,
			Cycle: next.Cycles, Max: dec.Max, Actions: dec.Actions}
	default:
		dec.SystemMessage = joinLines(dec.SystemMessage, "runtasks: "+msg)
	}
	return dec
}

func joinLines(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}
