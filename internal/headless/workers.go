package headless

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/state"
)

// WorkerBeads adds claims, leases and giving back to Beads (*beads.Client).
type WorkerBeads interface {
	Beads
	ClaimID(ctx context.Context, id, actor string) (beads.Issue, error)
	Heartbeat(ctx context.Context, id, actor string) error
	Reclaim(ctx context.Context, ids ...string) ([]string, error)
	Release(ctx context.Context, id, actor, note string) (beads.Issue, error)
	Block(ctx context.Context, id, actor, note string) (beads.Issue, error)
}

// Defaults of the worker options.
const (
	// DefaultHeartbeat is a third of bd v1.3.0's fixed 5-minute lease.
	DefaultHeartbeat = 100 * time.Second
	DefaultIdlePoll  = 5 * time.Second // the pause of a worker with nothing to claim
)

// WorkerOptions configure runtasks run --workers N.
type WorkerOptions struct {
	N         int           // agent loops in parallel (1 or more), each in a worktree per task
	Actor     string        // the base of the workers' bd actors (actor@<run id>-w<i>)
	Heartbeat time.Duration // how often a worker renews its task's lease (more than 0)
	IdlePoll  time.Duration // the wait when nothing is ready but work remains
	// AllowDirty starts the workers on a main work tree with changes to tracked files.
	AllowDirty bool
}

// maxBeadsRetries is how many passing bd failures in a row a worker waits out.
const maxBeadsRetries = 5

// worker is one agent loop of a multi-worker run.
type worker struct {
	*runner
	n, of int
	actor string
	bd    WorkerBeads
	repo  git.Repo
	base  string // the main work tree's branch, merged into
	wo    WorkerOptions
	env   []string // the agents' environment before a task's variables
	book  *book
	// lostLease is bd's answer when a heartbeat found the task taken ("" while held).
	lostLease atomic.Value
	view      *moments // bd as this cycle's moment saw it
}

// RunWorkers drives the epic with wo.N agent loops in parallel. Each cycle
// of a worker reclaims expired leases, claims one ready task atomically,
// runs the agent on it in its worktree while renewing the lease, gives the
// task back when the agent did not close it, and asks engine.Stop whether
// to go on. Each worker has its own run folder (<run id>-w<i>) and session.
func RunWorkers(ctx context.Context, o Options, wo WorkerOptions) (Result, error) {
	bd := o.Beads.(WorkerBeads) // a *beads.Client
	wo.IdlePoll = cmp.Or(wo.IdlePoll, DefaultIdlePoll)
	o = o.withDefaults()
	bk := &book{failures: map[string]int{}, kept: map[string]string{}, notify: o.Ports.Notify}
	o.Ports.Notify = onceEach(o.Ports.Notify)
	cfg := o.Config
	repo := git.Repo{Dir: cfg.Root}
	wts, err := repo.Worktrees(ctx)
	if err != nil || len(wts) == 0 {
		return Result{Code: engine.ExitUsage}, fmt.Errorf("workers need a git repository at %s: %v", cfg.Root, err)
	}
	base := wts[0].Branch
	if base == "" {
		return Result{Code: engine.ExitUsage}, fmt.Errorf("workers merge into the main work tree's branch, but %s is on a detached HEAD", cfg.Root)
	}
	// Merges into a main work tree with changes to tracked files fail.
	if paths, err := repo.Changed(ctx); (err != nil || len(paths) > 0) && !wo.AllowDirty {
		return Result{Code: engine.ExitUsage}, cmp.Or(err, fmt.Errorf("the main work tree %s has changes to tracked files, and the workers' merges into it would fail: %s; commit or stash them, or give --allow-dirty to go on", cfg.Root, strings.Join(paths, ", ")))
	}
	// The worktrees live under the project: keep them out of git status.
	pattern := cfg.Workflow.Worktrees.Pattern
	if dir, _, _ := strings.Cut(pattern, "{id}"); !filepath.IsAbs(pattern) && strings.Contains(dir, "/") {
		if err := repo.ExcludeLocally(ctx, "/"+dir[:strings.LastIndex(dir, "/")+1]); err != nil {
			o.Log.Warn("could not add the worktrees to .git/info/exclude", "err", err)
		}
	}
	screen := newScreen(o.Out, o.TTY, wo.N, o.Width)
	logAbove(o, screen)
	ws := make([]*worker, wo.N)
	for i := range ws {
		wopt := o
		wopt.RunID, wopt.Out, wopt.TTY = fmt.Sprintf("%s-w%d", o.RunID, i+1), slotWriter{screen, i}, false
		r, err := newRunner(wopt)
		if err != nil {
			return Result{Code: engine.ExitUsage}, err
		}
		ws[i] = &worker{runner: r, n: i + 1, of: wo.N, actor: wo.Actor + "@" + wopt.RunID, bd: bd, repo: repo, base: base, wo: wo, env: o.Environ, book: bk}
	}
	fmt.Fprintf(o.Out, "runtasks run: epic %s · %d workers · %s · merging into %s\n", cfg.Workflow.Epic, wo.N, ws[0].agent, base)
	results := make([]Result, wo.N)
	errs := make([]error, wo.N)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() { results[i], errs[i] = w.loop(ctx) })
	}
	wg.Wait()
	res := Result{Code: engine.ExitOK, Outcome: results[0].Outcome}
	rank := map[int]int{engine.ExitOK: 0, engine.ExitWorkLeft: 1, engine.ExitNeedsPerson: 2, engine.ExitUsage: 3, engine.ExitFailed: 4, engine.ExitInterrupted: 5}
	var err1 error
	for i, r := range results {
		res.Cycles += r.Cycles
		res.ClosedThisRun += r.ClosedThisRun
		if r.Tally.Total > 0 && r.Tally.Closed >= res.Tally.Closed {
			res.Tally = r.Tally
		}
		if rank[r.Code] > rank[res.Code] {
			res.Code, res.Outcome = r.Code, r.Outcome
		}
		if errs[i] != nil && err1 == nil {
			err1 = fmt.Errorf("worker %d: %w", i+1, errs[i])
		}
	}
	conflicts := bk.summary(o.Out, ws[0])
	fmt.Fprintln(o.Out, Clean(fmt.Sprintf("runtasks run: %d workers ended: %d cycles, %d/%d closed%s; exit %d", wo.N, res.Cycles, res.Tally.Closed, res.Tally.Total, conflicts, res.Code)))
	return res, err1
}

// loop is one worker: ask the engine, claim, work, give back or not, repeat.
func (w *worker) loop(ctx context.Context) (Result, error) {
	w.parent = ctx
	if _, err := w.createDir(); err != nil {
		return Result{Code: engine.ExitFailed}, err
	}
	w.view = &moments{WorkerBeads: w.bd, epic: w.epic}
	w.o.Beads, w.o.Ports.Beads = w.view, w.view
	_ = w.view.refresh(ctx)
	if t, err := w.o.Beads.Tally(ctx, w.epic); err == nil {
		w.state.ClosedAtStart, w.state.Closed, w.state.Total = t.Closed, t.Closed, t.Total
		w.p.closedAtStart = t.Closed
		w.p.Tally(t.Closed, t.Total)
	}
	dec, out := w.step(ctx, nil, nil, "")
	for out == nil {
		var task *beads.Issue
		if dec, task, out = w.next(ctx, dec); out != nil {
			break
		}
		var word string
		last, sum, stopped := w.agentCycle(ctx, dec, task.ID+" given back", func(agentCtx context.Context) (CycleRecord, Summary, error) {
			rec, sum, err := w.work(agentCtx, dec.Cycle, *task)
			word = w.settle(context.WithoutCancel(ctx), *task, sum, err)
			if err == nil || notTheTasks(err) {
				return rec, sum, err
			}
			// The task's failure is in its notes; the worker goes on.
			rec.Error = cmp.Or(rec.Error, oneLine(err.Error(), 300))
			return rec, sum, nil
		})
		if out = stopped; out != nil {
			break
		}
		if lost, _ := w.lostLease.Load().(string); word != "closed" && lost != "" {
			word = "lost to another worker"
		}
		dec, out = w.step(ctx, &sum, last, task.ID+" "+word)
	}
	return out.res, out.err
}

// next claims a task for the cycle the engine asked for, waiting while
// nothing is ready but work remains (saying why at least once a minute);
// it ends the run when the loop ended meanwhile, on an interrupt, when bd
// keeps failing, or on a task bd will not hand out.
func (w *worker) next(ctx context.Context, dec engine.Decision) (engine.Decision, *beads.Issue, *over) {
	failures := 0
	var said time.Time
	for n := 0; ; n++ {
		if ctx.Err() != nil {
			return dec, nil, ended(w.end(engine.ExitInterrupted, state.OutcomeInterrupted, fmt.Sprintf("interrupted before cycle %s", w.count()), nil))
		}
		task, lost, err := w.claim(ctx, n > 0 || w.view.m == nil) // the first try uses the cycle's moment
		switch {
		case ctx.Err() != nil:
			continue
		case errors.Is(err, errOmitted):
			return dec, nil, ended(w.end(engine.ExitNeedsPerson, state.OutcomeEscalated, oneLine(err.Error(), 400), nil))
		case err != nil:
			// A busy store or a server away for a moment is waited out a few
			// times; any other bd failure ends the worker (never "no work").
			why := "beads error: " + oneLine(err.Error(), 300)
			if failures++; failures > maxBeadsRetries || !transient(err) {
				return dec, nil, ended(w.end(engine.ExitFailed, state.OutcomeBeadsError, why, err))
			}
			w.p.Printf("%s · %s; trying again (%d/%d)", w.p.head(), why, failures, maxBeadsRetries)
		case task != nil:
			return dec, task, nil
		case lost && n == 0:
			continue // other workers were first: look again at once
		default:
			failures = 0
			// Nothing to claim: the engine says whether the loop ended.
			d, err := w.stop(ctx, nil, true)
			if err == nil && !d.Block && d.Outcome.Ends() {
				var out *over
				if dec, out = w.step(ctx, nil, nil, ""); out != nil {
					return dec, nil, out
				}
			} else if err != nil && ctx.Err() == nil {
				return dec, nil, ended(w.end(engine.ExitFailed, state.OutcomeError, err.Error(), err))
			}
			why := "waiting: nothing ready to claim; " + d.Why
			w.p.Action(why, true)
			if now := w.o.Now(); now.Sub(said) >= time.Minute {
				said = now
				w.p.Printf("%s · %s", w.p.head(), why)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(w.wo.IdlePoll):
		}
	}
}

// claim reads bd again (unless !refresh), reclaims expired leases, then
// claims the first ready task it wins (nil: none; lost: others won some).
// A task in progress under this worker's actor is a claim whose answer was
// lost: it is taken.
func (w *worker) claim(ctx context.Context, refresh bool) (task *beads.Issue, lost bool, err error) {
	if refresh {
		if err := w.view.refresh(ctx); err != nil {
			return nil, false, err
		}
	}
	w.p.Action("reclaiming expired leases, claiming", true)
	sub, err := w.view.Subtree(ctx, w.epic)
	if err != nil {
		return nil, false, err
	}
	if i := slices.IndexFunc(sub, func(is beads.Issue) bool { return is.Status == beads.StatusInProgress && is.Assignee == w.actor }); i >= 0 {
		return &sub[i], false, nil
	}
	inProgress := slices.DeleteFunc(slices.Clone(sub), func(is beads.Issue) bool { return is.Status != beads.StatusInProgress })
	if len(inProgress) > 0 {
		wts, _ := w.repo.Worktrees(ctx)
		// The stuck rule decides; bd reclaim gives back the expired leases.
		// Every task a worker holds was in a worktree (seen), here or on
		// another machine, even when this repository has none left.
		var held []string
		for _, is := range inProgress {
			held = append(held, is.ID)
		}
		_, stuck := engine.ClassifyInProgress(inProgress, wts, nil, held, w.cfg, w.o.Now())
		var ids []string
		for _, t := range stuck {
			if i := slices.IndexFunc(inProgress, func(is beads.Issue) bool { return is.ID == t.ID }); i >= 0 && engine.LeaseExpired(inProgress[i], w.o.Now()) {
				ids = append(ids, t.ID)
			}
		}
		got, err := w.bd.Reclaim(ctx, ids...) // none: no bd call
		if err != nil {
			return nil, false, err
		}
		if len(got) > 0 {
			w.p.Printf("%s · reclaimed expired lease(s): %s", w.p.head(), strings.Join(got, ", "))
		}
	}
	ready, err := w.view.Ready(ctx, w.epic)
	if err != nil {
		return nil, false, err
	}
	cands := slices.DeleteFunc(ready, func(is beads.Issue) bool { return is.IssueType == beads.TypeEpic })
	// Workers start at different places in the list, so they seldom race.
	if len(cands) > 0 {
		k := (w.n - 1) % len(cands)
		cands = append(cands[k:], cands[:k]...)
	}
	for _, is := range cands {
		got, err := w.bd.ClaimID(ctx, is.ID, w.actor)
		if err != nil && !beads.AlreadyClaimed(err) {
			// The answer may be lost while the claim landed: bd says whose it is.
			shown, serr := w.bd.Show(context.WithoutCancel(ctx), is.ID)
			switch {
			case serr != nil:
				return nil, false, err
			case shown.Status == beads.StatusInProgress && shown.Assignee == w.actor && ctx.Err() == nil:
				w.p.Printf("%s · %s: the claim's answer failed (%s), but bd shows it ours", w.p.head(), is.ID, oneLine(err.Error(), 120))
				got, err = shown, nil
			case shown.Status == beads.StatusInProgress && shown.Assignee == w.actor:
				_, _ = w.bd.Release(context.WithoutCancel(ctx), is.ID, w.actor, "runtasks run: claimed as the run was interrupted; given back unworked.")
				return nil, false, err
			case shown.Status != beads.StatusOpen:
				lost = true // taken or closed meanwhile
				continue
			case transient(err) || !slices.ContainsFunc(w.view.omitted, func(o beads.Issue) bool { return o.ID == is.ID }):
				return nil, false, err
			default: // bd will not hand out a task its ready list omits
				return nil, false, fmt.Errorf("%w: %s: ready with its blockers closed, but bd update --claim failed (%v); bd show: status %s, assignee %q",
					errOmitted, shown.ID, err, shown.Status, shown.Assignee)
			}
		}
		if err == nil {
			if got.ID == "" {
				got = is
			}
			if got.Title == "" {
				got.Title, got.Description = is.Title, is.Description
			}
			return &got, false, nil
		}
		lost = true // another worker was first
	}
	return nil, lost, nil
}

// work runs the agent on the task in its worktree, renewing the lease.
func (w *worker) work(ctx context.Context, cycle int, task beads.Issue) (CycleRecord, Summary, error) {
	path, branch := w.wtPath(task.ID), "agent/"+task.ID
	note, err := w.prepare(ctx, task.ID, path, branch)
	if err != nil {
		return CycleRecord{N: cycle, StartedAt: w.o.Now(), ExitCode: -1}, Summary{}, fmt.Errorf("worktree for %s: %w", task.ID, err)
	}
	ctxFile := filepath.Join(w.dir, "task-"+task.ID+".json")
	if b, err := json.MarshalIndent(task, "", "  "); err == nil {
		_ = os.WriteFile(ctxFile, b, 0o600)
	}
	w.workDir = path
	w.o.Environ = append(slices.Clip(w.env), "BEADS_ACTOR="+w.actor, "RUNTASKS_TASK="+task.ID, "RUNTASKS_WORKTREE="+path)
	if dir := w.cfg.BeadsDir(); dir != "" {
		w.o.Environ = append(w.o.Environ, "BEADS_DIR="+dir)
	}
	w.p.Printf("%s · %s claimed: %s (worktree %s)", w.p.head(), task.ID, oneLine(task.Title, 80), claim.Rel(w.cfg.Root, path))

	w.lostLease.Store("")
	agentCtx, stopAgent := context.WithCancelCause(ctx)
	defer stopAgent(nil)
	beat, stop := context.WithCancel(context.WithoutCancel(ctx))
	var beats sync.WaitGroup
	beats.Go(func() {
		t := time.NewTicker(w.wo.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-beat.Done():
				return
			case <-t.C:
				err := w.bd.Heartbeat(beat, task.ID, w.actor)
				switch {
				case err == nil || beat.Err() != nil:
				case strings.Contains(err.Error(), "status closed"):
					return // the agent closed its task: the lease ended with it
				case strings.Contains(err.Error(), "issue already claimed") || strings.Contains(err.Error(), "issue not claimable"):
					// The task is no longer ours (another holds it, or it was
					// reclaimed or closed after a lapsed lease): the agent
					// stops, so two workers never work one task.
					w.lostLease.Store(err.Error())
					stopAgent(errors.New(task.ID + ": lease lost (" + oneLine(err.Error(), 200) + ")"))
					return
				default:
					w.log.Warn("lease not renewed", "task", task.ID, "err", err)
				}
			}
		}
	})
	rec, sum, err := w.runAgent(agentCtx, cycle, w.taskPrompt(task, path, branch, ctxFile, note), "")
	stop()
	beats.Wait()
	return rec, sum, err
}

// settle says how the task ended: "closed" (its merge done), else mostly
// "given back": open again with what happened in its notes.
func (w *worker) settle(ctx context.Context, task beads.Issue, sum Summary, runErr error) string {
	_ = w.view.refresh(ctx)
	is, err := w.view.Show(ctx, task.ID)
	switch {
	case err != nil:
		// Unread, it is not given back blindly (the agent may have closed
		// it): its lease lapses and another worker reclaims it.
		w.p.Printf("%s · %s could not be read (%s): left to its lease", w.p.head(), task.ID, oneLine(err.Error(), 200))
		w.book.set(task.ID, "unread")
		return "unread"
	case is.Status == beads.StatusClosed:
		w.closed(ctx, task.ID)
		return "closed"
	}
	if lost, _ := w.lostLease.Load().(string); lost != "" || is.Assignee != w.actor {
		// Someone else holds it now: nothing to give back.
		w.book.mu.Lock()
		defer w.book.mu.Unlock()
		return cmp.Or(w.book.kept[task.ID], "given back")
	}
	why := "the agent ended without closing it"
	switch {
	case runErr != nil:
		why = "the agent failed: " + oneLine(runErr.Error(), 200)
	case w.parent.Err() != nil:
		why = "the run was interrupted"
	}
	note := fmt.Sprintf("runtasks run worker %d (%s): %s; not merged or not verified, given back.", w.n, w.o.Now().UTC().Format(time.RFC3339), why)
	if f := oneLine(sum.FinalMessage, 400); f != "" {
		note += " Agent's last words: " + f
	}
	defer func() { w.view.m = nil }()
	conflict, parked := w.conflicted(ctx, task)
	if parked {
		return "blocked: needs a person"
	}
	note += conflict
	if n := strings.Count(is.Notes, failedMark) + 1; runErr != nil && !notTheTasks(runErr) && n >= w.cfg.Run.MaxTaskFailures {
		// A task that keeps failing waits for a person; the others go on.
		note += fmt.Sprintf(" It failed %d times (run.max_task_failures): quarantined, blocked until a person looks.", n)
		if _, err := w.bd.Block(ctx, task.ID, w.actor, note); err == nil {
			w.p.Printf("%s · %s failed %d times: quarantined (blocked, needs a person)", w.p.head(), task.ID, n)
			return "quarantined"
		}
	}
	if _, err := w.bd.Release(ctx, task.ID, w.actor, note); err != nil {
		w.p.Printf("%s · %s could not be given back: %s", w.p.head(), task.ID, oneLine(err.Error(), 200))
		w.log.Warn("release", "task", task.ID, "err", err)
	}
	w.book.set(task.ID, "given back")
	return "given back"
}

// taskPrompt hands the agent its one task.
func (w *worker) taskPrompt(task beads.Issue, path, branch, ctxFile, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are worker %d of %d of runtasks run on beads epic %s. Your task is %s: %s\n\n", w.n, w.of, w.epic, task.ID, task.Title)
	if d := strings.TrimSpace(task.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	fmt.Fprintf(&b, `You work in the git worktree %s, on branch %s; the task's bd record is in %s.

%s1. Do the task there, and verify it (build, tests).
2. Commit your work on %s.
3. Merge it into %s in the main work tree: git -C %s merge --no-edit %s
4. Only when the merge succeeded: bd close %s --reason "<what you did>"

Other workers merge into the same branch: when git says another process holds a lock, wait a moment and try again. If the merge conflicts, the base moved: run git -C %s merge --abort (the main work tree must stay clean), then in your worktree run git merge %s, resolve the conflicts there (keep what both sides meant), verify, commit, and go back to step 3. If you cannot resolve it, do not close the task: say in your final message why; runtasks gives the task back with your message. Work on no other task and claim nothing else.
`, path, branch, ctxFile, note, branch, w.base, w.cfg.Root, branch, task.ID, w.cfg.Root, w.base)
	return b.String()
}

// wtPath is the worktree of a task.
func (w *worker) wtPath(id string) string {
	return engine.WorktreePath(w.cfg.Root, w.cfg.Workflow.Worktrees.Pattern, id)
}
