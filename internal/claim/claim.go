package claim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/prompts"
	"github.com/runtasks/runtasks/internal/state"
)

// Tracker is what a claim asks of beads; *beads.Client implements it.
type Tracker interface {
	Show(ctx context.Context, id string) (beads.Issue, error)           // an unknown id is beads.KindNotFound
	ClaimID(ctx context.Context, id, actor string) (beads.Issue, error) // bd update --claim
}

// MaxDepth bounds how many ancestors are loaded above a task.
const MaxDepth = 8

// ErrUnknown is returned for an id beads does not know; nothing is created.
var ErrUnknown = errors.New("unknown issue")

// ErrClosed is returned for a closed task; nothing is claimed.
var ErrClosed = errors.New("task is closed")

// ErrEpic refuses a claim of an epic: /run-tasks <id> drives an epic.
var ErrEpic = errors.New("is an epic")

// HeldError is returned when another actor holds the claim: nothing is stolen.
type HeldError struct {
	Task   string
	Holder string
	Since  time.Time
}

func (e *HeldError) Error() string {
	s := fmt.Sprintf("%s is already claimed by %s", e.Task, e.Holder)
	if !e.Since.IsZero() {
		s += " since " + e.Since.UTC().Format(time.RFC3339)
	}
	return s
}

// Level is one issue of a task's hierarchy.
type Level struct {
	ID                 string `json:"id"`
	Title              string `json:"title"`
	Type               string `json:"type,omitempty"`
	Status             string `json:"status,omitempty"`
	Description        string `json:"description,omitempty"`
	Design             string `json:"design,omitempty"`
	AcceptanceCriteria string `json:"acceptance_criteria,omitempty"`
}

func levelOf(is beads.Issue) Level {
	return Level{ID: is.ID, Title: is.Title, Type: is.IssueType, Status: is.Status,
		Description: is.Description, Design: is.Design, AcceptanceCriteria: is.AcceptanceCriteria}
}

// Actor is the beads actor a session claims as: base (claim.actor, else
// BEADS_ACTOR, else USER, else "runtasks") @ the session id, so two sessions
// of one person never share a claim (bd's claim is idempotent for one actor).
func Actor(base string, getenv func(string) string, session string) string {
	if getenv != nil {
		base = cmp.Or(base, getenv("BEADS_ACTOR"), getenv("USER"))
	}
	base = cmp.Or(base, "runtasks")
	if session == "" {
		return base
	}
	// base may already be this session's actor (BEADS_ACTOR as the session
	// hook exports it).
	suffix := "@" + state.SafeName(session, 64, "._-")
	return strings.TrimSuffix(base, suffix) + suffix
}

type Request struct {
	Task      string
	Session   string
	Actor     string // the beads actor (see Actor)
	Root      string // the project root: RunsDir and the answer's paths are relative to it
	RunsDir   string // claim.runs_dir
	Templates string // claim.templates: files replacing the embedded run-folder templates
	Now       time.Time
	Store     *state.Store // records the claim in the session's binding (nil: not recorded)
}

type Result struct {
	Task      Level     `json:"task"`
	Ancestors []Level   `json:"ancestors,omitempty"` // the parent (the plan) first, up to the root (the goal)
	Session   string    `json:"session,omitempty"`
	Actor     string    `json:"actor"`
	ClaimedAt time.Time `json:"claimed_at"`
	RunID     string    `json:"run_id"`
	RunDir    string    `json:"run_dir"` // absolute
	Files     []string  `json:"files"`
	Again     bool      `json:"again,omitempty"` // the session had claimed it already: its run folder is reused
	Root      string    `json:"-"`               // the project root, for relative paths in messages
}

// Plan is the task's parent, nil when it has none.
func (r Result) Plan() *Level {
	if len(r.Ancestors) == 0 {
		return nil
	}
	return &r.Ancestors[0]
}

// Goal is the top of the hierarchy, nil when the task has fewer than two ancestors.
func (r Result) Goal() *Level {
	if len(r.Ancestors) < 2 {
		return nil
	}
	return &r.Ancestors[len(r.Ancestors)-1]
}

// Claim loads the task's hierarchy (its ancestors up to MaxDepth, one bd
// show at a time), claims it atomically in beads for the request's actor,
// writes its run folder and records it in the session's binding. Unknown
// ids (ErrUnknown), epics (ErrEpic), closed tasks (ErrClosed) and tasks
// held by someone else (*HeldError) change nothing.
func Claim(ctx context.Context, t Tracker, r Request) (Result, error) {
	is, err := t.Show(ctx, r.Task)
	if beads.IsKind(err, beads.KindNotFound) {
		return Result{}, fmt.Errorf("%w %s", ErrUnknown, r.Task)
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{Task: levelOf(is), Session: r.Session, Actor: r.Actor, ClaimedAt: r.Now.UTC().Truncate(time.Second), Root: r.Root}
	if is.IssueType == beads.TypeEpic {
		return Result{}, fmt.Errorf("%s %w: /run-tasks %s drives it", is.ID, ErrEpic, is.ID)
	}
	if is.Status == beads.StatusClosed {
		return Result{}, fmt.Errorf("%s: %w", r.Task, ErrClosed)
	}
	if is.Status == beads.StatusInProgress && is.Assignee != "" && is.Assignee != r.Actor {
		return Result{}, &HeldError{Task: is.ID, Holder: is.Assignee, Since: is.StartedAt}
	}
	// The hierarchy (a bd show an ancestor), only for a task it may claim.
	seen := map[string]bool{is.ID: true}
	for p := is.ParentID(); p != "" && !seen[p] && len(res.Ancestors) < MaxDepth; {
		seen[p] = true
		anc, err := t.Show(ctx, p)
		if err != nil {
			return Result{}, fmt.Errorf("load %s's ancestor %s: %w", r.Task, p, err)
		}
		res.Ancestors = append(res.Ancestors, levelOf(anc))
		p = anc.ParentID()
	}
	if _, err := renderAll(r.Templates, runData(res, RunID(res.Task.ID, res.ClaimedAt))); err != nil {
		return Result{}, err
	}
	claimed, err := t.ClaimID(ctx, is.ID, r.Actor)
	if err != nil {
		if beads.AlreadyClaimed(err) {
			held := &HeldError{Task: is.ID, Holder: "another actor"}
			if now, serr := t.Show(ctx, is.ID); serr == nil && now.Assignee != "" {
				held.Holder, held.Since = now.Assignee, now.StartedAt
			}
			return Result{}, held
		}
		return Result{}, fmt.Errorf("claim %s: %w", is.ID, err)
	}
	res.Task.Status = claimed.Status

	var prior state.ClaimedRun
	if r.Store != nil && r.Session != "" {
		if b, err := r.Store.Binding(r.Session); err == nil {
			if i := slices.IndexFunc(b.Claims, func(c state.ClaimedRun) bool { return c.Task == is.ID }); i >= 0 {
				prior = b.Claims[i]
			}
		}
	}
	if fi, err := os.Stat(prior.RunDir); prior.RunDir != "" && err == nil && fi.IsDir() {
		res.Again = true
		res.RunDir, res.ClaimedAt = prior.RunDir, prior.ClaimedAt
		res.RunID = filepath.Base(prior.RunDir)
		for _, f := range prompts.RunFiles {
			res.Files = append(res.Files, filepath.Join(prior.RunDir, f.Name))
		}
		return res, nil
	}
	run, err := writeRun(r, &res)
	if err != nil {
		return res, fmt.Errorf("claimed %s, but the run folder failed: %w", is.ID, err)
	}
	if r.Store != nil && r.Session != "" {
		if _, err := r.Store.UpdateBinding(r.Session, func(b *state.Binding) error {
			b.AddClaim(run)
			return nil
		}); err != nil {
			return res, fmt.Errorf("claimed %s, but recording it for session %s failed: %w", is.ID, r.Session, err)
		}
	}
	return res, nil
}

// Arm binds session to epic (or a task) so that its Stop hook drives it;
// an unknown id (ErrUnknown) or a closed issue (ErrClosed) arms nothing.
// Arming again for the same epic keeps the first ArmedAt.
func Arm(ctx context.Context, t Tracker, store *state.Store, session, epic string, now time.Time) (beads.Issue, state.Binding, error) {
	is, err := t.Show(ctx, epic)
	if beads.IsKind(err, beads.KindNotFound) {
		return beads.Issue{}, state.Binding{}, fmt.Errorf("%w %s", ErrUnknown, epic)
	}
	if err != nil {
		return beads.Issue{}, state.Binding{}, err
	}
	if is.Status == beads.StatusClosed {
		return is, state.Binding{}, fmt.Errorf("%s: %w", epic, ErrClosed)
	}
	b, err := store.UpdateBinding(session, func(b *state.Binding) error {
		if b.Epic != epic {
			b.ArmedAt = now.UTC().Truncate(time.Second)
		}
		b.Epic = epic
		return nil
	})
	return is, b, err
}

// ArmFailureText is the context injected when a prompt's arming failed.
func ArmFailureText(epic string, err error) string {
	switch {
	case errors.Is(err, ErrUnknown):
		return fmt.Sprintf("runtasks: session not armed: beads has no issue %s (/run-tasks takes an epic or a task id).", epic)
	case errors.Is(err, ErrClosed):
		return fmt.Sprintf("runtasks: session not armed: %s is closed.", epic)
	}
	return fmt.Sprintf("runtasks: session not armed: %v", err)
}
