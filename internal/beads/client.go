package beads

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
	"golang.org/x/sync/errgroup"
)

// DefaultTimeout bounds one bd invocation when Client.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Client runs bd. The zero value runs "bd" from PATH in the current
// directory with bd's own store discovery.
//
// Queries run one at a time: bd's embedded store serialises access, so
// concurrent bd processes on one store are slower than sequential ones.
// The one exception is Ready on a store in server mode, which may run two
// at once. Slots bound the bd processes of every runtasks on the machine.
type Client struct {
	// Bin is the bd binary, a name looked up on PATH or a path; default "bd".
	Bin string
	// Dir, when set, selects the store (BEADS_DIR); otherwise bd discovers
	// it by walking up from WorkDir.
	Dir string
	// WorkDir is the directory bd runs in; empty means the current one.
	WorkDir string
	// Timeout bounds each invocation; zero means DefaultTimeout.
	Timeout time.Duration
	// Env, when non-nil, replaces os.Environ() as bd's base environment.
	Env []string
	// Slots, when set, bound the bd processes running at once on this
	// machine: each call waits for a free slot (at most Slots.Wait, not
	// counted in Timeout) before bd starts.
	Slots *Slots
	// Links, when set, remembers per epic which issues Ready had to read
	// by id, so that the next Ready reads them while bd ready runs.
	Links LinkMemory
}

// checkID refuses an issue or epic id that bd would read as an option: ids
// are data, never flags.
func checkID(args []string, ids ...string) error {
	for _, id := range ids {
		if id == "" || strings.HasPrefix(id, "-") {
			return &Error{Kind: KindNotFound, Args: args, Code: -1, Msg: fmt.Sprintf("bad issue id %q: an id is not empty and never starts with '-'", id)}
		}
	}
	return nil
}

// ErrorKind classifies a bd failure.
type ErrorKind string

const (
	KindMissing   ErrorKind = "missing"    // the bd binary was not found
	KindNoStore   ErrorKind = "no_store"   // no .beads store was found
	KindNotFound  ErrorKind = "not_found"  // an issue id does not exist
	KindTimeout   ErrorKind = "timeout"    // bd did not answer in time
	KindBadOutput ErrorKind = "bad_output" // rc 0 but the output is not the JSON expected
	KindConflict  ErrorKind = "conflict"   // a guard (--if-status, claim) did not hold (rc 13)
	KindFailed    ErrorKind = "failed"     // any other non-zero exit
	// KindUnavailable: bd could not reach its store's Dolt SQL server (down,
	// refusing, unreachable, access denied, no such database). Never "no
	// work".
	KindUnavailable ErrorKind = "unavailable"
	// KindBusy: no bd slot came free in time (Slots); bd did not run.
	KindBusy ErrorKind = "busy"
)

// Error is a failed bd invocation. It carries bd's own message; a failure is
// never turned into an empty result.
type Error struct {
	Kind ErrorKind
	Args []string // bd's arguments
	Code int      // exit status; -1 when bd did not run to completion
	Msg  string   // bd's message (stderr text or the JSON error), trimmed
	Err  error    // the underlying error, if any
}

func (e *Error) Error() string {
	what := map[ErrorKind]string{KindMissing: "bd not found", KindTimeout: "timed out", KindBusy: "not started", KindBadOutput: "unexpected output"}[e.Kind]
	if what == "" && e.Code > 0 {
		what = fmt.Sprintf("exit status %d", e.Code)
	} else if what == "" {
		what = string(e.Kind)
	}
	s := "bd " + strings.Join(e.Args, " ") + ": " + what
	if e.Msg != "" {
		s += ": " + e.Msg
	} else if e.Err != nil && e.Kind != KindFailed {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// IsKind reports whether err is a bd *Error of the given kind.
func IsKind(err error, kind ErrorKind) bool {
	var be *Error
	return errors.As(err, &be) && be.Kind == kind
}

// Ready lists the epic's ready descendants, sub-epics included: bd ready
// --parent E's answer, found the cheap way whenever that is exact.
//
// bd answers --parent with a recursive query that grows with the store
// (docs/engine.md#ready-under-an-epic); bd ready --limit 0 costs a fraction
// of it. Each ready issue carries its parents, so only a chain through an
// issue that is not ready needs more facts: those issues are read by id
// (placeReady). Their ids are remembered per epic (Links) and read again
// next time, beside bd ready on a server-mode store, else with
// the first read by id. Every bd failure is an error, never "no work"; an
// unknown epic gives an empty list (use Show).
func (c *Client) Ready(ctx context.Context, epic string) ([]Issue, error) {
	if err := checkID([]string{"ready", "--json", "--limit", "0", "--parent", epic}, epic); err != nil {
		return nil, err
	}
	var hint []string
	if c.Links != nil {
		hint = linkIDs(c.Links.ReadyLinks(epic))
	}
	in, read, err := readyUnder(ctx, epic, hint, len(hint) > 0 && c.serverMode(), c)
	if err != nil {
		return nil, err
	}
	if c.Links != nil && !slices.Equal(read, hint) {
		// A memory that cannot be written costs the next stop a read, no
		// more: the answer does not depend on it.
		_ = c.Links.SetReadyLinks(epic, read)
	}
	return in, nil
}

// LinkMemory remembers, per epic, the ids of the issues that are not ready
// whose links the epic's last Ready had to read (state.Store keeps them in
// the state directory). Ids only: what they say is read afresh each time.
type LinkMemory interface {
	// ReadyLinks returns the ids remembered for epic; none when unknown.
	ReadyLinks(epic string) []string
	// SetReadyLinks remembers ids (sorted; empty forgets).
	SetReadyLinks(epic string, ids []string) error
}

// linkIDs keeps the remembered ids bd list --id can name, sorted and once
// each: a memory is a hint, never a reason to fail.
func linkIDs(ids []string) []string {
	out := slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
		return id == "" || strings.HasPrefix(id, "-") || strings.Contains(id, ",")
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// readyUnder is Ready's answer and the ids it needed to read.
func readyUnder(ctx context.Context, epic string, hint []string, together bool, r reader) (in []Issue, read []string, err error) {
	var ready, ahead []Issue
	if together { // bd ready and bd list --id hint at once; the first failure stops the other
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			ahead, err = r.ListIDs(gctx, hint)
			return err
		})
		g.Go(func() (err error) {
			ready, err = r.ReadyAll(gctx)
			return err
		})
		err = g.Wait()
	} else {
		ready, err = r.ReadyAll(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	return placeReady(ctx, epic, ready, hint, together, ahead, r)
}

// serverMode reports whether the store bd finds (FindStore) says
// "dolt_mode": "server". On an embedded store two bd processes wait on
// Dolt's lock and take longer together than one after the other
// (docs/benchmarks.md#large-epics).
func (c *Client) serverMode() bool {
	dir, _, _ := FindStore(c.Dir, c.WorkDir, c.env())
	if dir == "" {
		return false
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.WorkDir, dir)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "metadata.json")) // none: not JSON, not server mode
	var meta struct {
		Mode string `json:"dolt_mode"`
	}
	return json.Unmarshal(data, &meta) == nil && meta.Mode == ModeServer
}

// ReadyAll lists every ready issue of the store (bd ready --limit 0), bd's
// cheapest query of ready work.
func (c *Client) ReadyAll(ctx context.Context) ([]Issue, error) {
	return query[[]Issue](ctx, c, nil, "ready", "--json", "--limit", "0")
}

// Open lists every unclosed issue of the store (bd list --json --limit
// 0), epics and tasks: what shell completion offers.
func (c *Client) Open(ctx context.Context) ([]Issue, error) {
	return query[[]Issue](ctx, c, nil, "list", "--json", "--limit", "0")
}

// ReadyParent asks bd for the epic's ready descendants the slow, exact way
// (bd ready --parent E): the reference Ready is held to.
func (c *Client) ReadyParent(ctx context.Context, epic string) ([]Issue, error) {
	return query[[]Issue](ctx, c, []string{epic}, "ready", "--json", "--limit", "0", "--parent", epic)
}

// ListIDs reads the named issues in any status and of any type (bd list
// --id a,b --all, templates, gates and infrastructure issues included):
// each with its current parent links. An id bd does not know is absent
// from the answer, not an error.
func (c *Client) ListIDs(ctx context.Context, ids []string) ([]Issue, error) {
	args := []string{"list", "--json", "--limit", "0", "--all", "--include-templates", "--include-gates", "--include-infra",
		"--id", strings.Join(ids, ",")}
	for _, id := range ids {
		if strings.Contains(id, ",") {
			return nil, &Error{Kind: KindNotFound, Args: args, Code: -1, Msg: fmt.Sprintf("bad issue id %q: an id holds no comma", id)}
		}
	}
	return query[[]Issue](ctx, c, ids, args...)
}

// reader is what Ready asks bd: a *Client, or a fake in the tests.
type reader interface {
	ReadyAll(ctx context.Context) ([]Issue, error)
	ListIDs(ctx context.Context, ids []string) ([]Issue, error)
	ReadyParent(ctx context.Context, epic string) ([]Issue, error)
}

// maxLinkReads bounds the bd list --id steps up a chain before Ready asks
// bd ready --parent instead: more would cost what that query does.
const maxLinkReads = 3

// placeReady picks the epic's descendants from ready (every ready issue,
// in bd's order), reading by id the issues Under reports missing (with the
// hierarchical ids above them) until every place is known. The issues of
// hint come from early or with the first read. An issue bd does not know,
// or a chain still open after maxLinkReads, falls back to bd ready
// --parent. read lists (sorted) every issue a step needed.
func placeReady(ctx context.Context, epic string, ready []Issue, hint []string, ahead bool, early []Issue, r reader) (in []Issue, read []string, err error) {
	var known []Issue
	have := make(map[string]bool, len(ready))
	for _, is := range ready {
		have[is.ID] = true
	}
	// pool holds the issues of hint once read: nil for those bd does not know.
	pool := make(map[string]*Issue, len(hint))
	pending := hint
	if ahead {
		for _, id := range hint {
			pool[id] = nil
		}
		for i := range early {
			if _, ok := pool[early[i].ID]; ok {
				pool[early[i].ID] = &early[i]
			}
		}
		pending = nil
	}
	add := func(is Issue) {
		if !have[is.ID] {
			have[is.ID] = true
			known = append(known, is)
		}
	}
	done := func(in []Issue, err error) ([]Issue, []string, error) {
		if err != nil {
			return nil, nil, err
		}
		slices.Sort(read)
		return in, read, nil
	}
	asked := map[string]bool{}
	for reads := 0; ; {
		in, missing := Under(epic, ready, known)
		if len(missing) == 0 {
			return done(in, nil)
		}
		if slices.ContainsFunc(missing, func(id string) bool {
			return asked[id] || strings.Contains(id, ",") // gone, or not an id bd list --id can name
		}) {
			return done(r.ReadyParent(ctx, epic))
		}
		var ids []string
		for _, id := range missing {
			for a := id; a != epic; {
				if !have[a] && !asked[a] && !strings.Contains(a, ",") {
					asked[a] = true
					read = append(read, a)
					if is, ok := pool[a]; !ok {
						ids = append(ids, a)
					} else if is != nil {
						add(*is)
					}
				}
				i := strings.LastIndexByte(a, '.')
				if i <= 0 {
					break
				}
				a = a[:i]
			}
		}
		if len(ids) == 0 {
			continue // all read early
		}
		if reads == maxLinkReads {
			return done(r.ReadyParent(ctx, epic))
		}
		reads++
		// The issues of hint not read yet come with this read, into pool.
		for _, id := range pending {
			if !have[id] && !asked[id] {
				pool[id] = nil
				ids = append(ids, id)
			}
		}
		pending = nil
		got, err := r.ListIDs(ctx, ids)
		if err != nil {
			return nil, nil, err
		}
		for i := range got {
			if _, ok := pool[got[i].ID]; ok { // not needed yet
				pool[got[i].ID] = &got[i]
			} else {
				add(got[i])
			}
		}
	}
}

// Under picks from ready (every ready issue, in bd's order) the epic's
// descendants as bd ready --parent lists them: reached by parent-child
// links, or with no parent link and an id hierarchical under the epic's.
// Parents come from ready, else from known. When a ready issue's place
// hangs on an ancestor neither holds, missing lists those ancestors
// (sorted) and in must not be used.
func Under(epic string, ready, known []Issue) (in []Issue, missing []string) {
	parents := make(map[string][]string, len(ready)+len(known))
	for _, is := range known {
		parents[is.ID] = is.parentIDs()
	}
	for _, is := range ready { // a ready issue's own links, as the ready answer saw them
		parents[is.ID] = is.parentIDs()
	}
	// Walk down the known links: from the epic, every issue reached has
	// the epic as an ancestor; from an ancestor that is known nowhere,
	// every issue reached may have it.
	children := make(map[string][]string, len(parents))
	unknown := map[string]bool{}
	for id, ps := range parents {
		for _, p := range ps {
			children[p] = append(children[p], id)
			if _, ok := parents[p]; !ok && p != epic {
				unknown[p] = true
			}
		}
	}
	under := reach(children, epic)
	// open holds the ready issues not yet placed in the epic.
	open := make(map[string]bool, len(ready))
	for _, is := range ready {
		switch {
		case is.ID == epic:
		case under[is.ID]:
			in = append(in, is)
		case strings.HasPrefix(is.ID, epic+".") && len(parents[is.ID]) == 0:
			// bd's rule for a hierarchical id whose parent link is gone
			// (bd update --parent ""): still the epic's, by its id.
			in = append(in, is)
		default:
			open[is.ID] = true
		}
	}
	// An unknown ancestor matters only when a ready issue below it is not
	// in yet: that issue's place hangs on the ancestor's parents.
	for u := range unknown {
		for id := range reach(children, u) {
			if open[id] {
				missing = append(missing, u)
				break
			}
		}
	}
	slices.Sort(missing)
	return in, missing
}

// Subtree lists every unclosed, unpinned descendant of the epic (bd list's
// default answer) with its stored status and open blockers (BlockedBy),
// placed by bd ready --parent's rule. A second query (bd list --all) runs
// only when an issue's place hangs on an unlisted (closed) ancestor.
func (c *Client) Subtree(ctx context.Context, epic string) ([]Issue, error) {
	open, err := query[[]Issue](ctx, c, []string{epic}, "list", "--json", "--limit", "0")
	if err != nil {
		return nil, err
	}
	links := open
	if _, missing := Under(epic, open, nil); len(missing) > 0 {
		if links, err = query[[]Issue](ctx, c, nil, tallyArgs...); err != nil {
			return nil, err
		}
	}
	return descendants(open, links, epic), nil
}

// reach is the set of ids below from by children (each id's children).
func reach(children map[string][]string, from string) map[string]bool {
	seen := make(map[string]bool)
	for queue := []string{from}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return seen
}

// descendants picks from list the issues under root (by the parent links
// of links, as Under places them) with their unclosed blockers that list
// holds.
func descendants(list, links []Issue, root string) []Issue {
	in, _ := Under(root, links, nil)
	member := make(map[string]bool, len(in))
	for _, is := range in {
		member[is.ID] = true
	}
	open := make(map[string]bool, len(list))
	for _, is := range list {
		if is.Status != StatusClosed {
			open[is.ID] = true
		}
	}
	var out []Issue
	for _, is := range list {
		if !member[is.ID] {
			continue
		}
		is.Parent = is.ParentID()
		is.BlockedBy = nil
		for _, d := range is.Dependencies {
			if d.Type == DepBlocks && open[d.DependsOnID] && !slices.Contains(is.BlockedBy, d.DependsOnID) {
				is.BlockedBy = append(is.BlockedBy, d.DependsOnID)
			}
		}
		out = append(out, is)
	}
	return out
}

// Show reads one issue. An unknown id is an *Error of kind KindNotFound.
func (c *Client) Show(ctx context.Context, id string) (Issue, error) {
	args := []string{"show", id, "--json"}
	issues, err := query[[]Issue](ctx, c, []string{id}, args...)
	if err != nil {
		return Issue{}, err
	}
	if i := slices.IndexFunc(issues, func(is Issue) bool { return is.ID == id }); i >= 0 {
		return issues[i], nil
	}
	return Issue{}, &Error{Kind: KindNotFound, Args: args, Msg: "issue " + id + " not in bd's answer"}
}

// AlreadyClaimed reports whether a claim failed because another actor holds
// the issue (bd: "issue already claimed by …", or a guard's rc 13).
func AlreadyClaimed(err error) bool {
	return err != nil && (IsKind(err, KindConflict) || strings.Contains(err.Error(), "already claimed"))
}

// ClaimID claims one named issue for the actor (bd update --claim). A claim
// held by someone else is an *Error of kind KindConflict or KindFailed.
func (c *Client) ClaimID(ctx context.Context, id, actor string) (Issue, error) {
	return c.one(ctx, id, actor, "update", id, "--claim", "--json")
}

// Heartbeat renews the actor's lease on an issue it holds (bd heartbeat).
// A lease reclaimed or an issue closed meanwhile is an error: the holder
// learns to stop.
func (c *Client) Heartbeat(ctx context.Context, id, actor string) error {
	args := []string{"heartbeat", id, "--json"}
	if actor != "" {
		args = append(args, "--actor", actor)
	}
	_, err := c.run(ctx, []string{id}, args)
	return err
}

// Reclaim gives back the named issues whose bd lease has expired (bd
// reclaim --older-than 0s --id …): open, unassigned. It returns the ids bd
// reclaimed; an issue whose lease is live, or that another replica granted,
// is left alone.
func (c *Client) Reclaim(ctx context.Context, ids ...string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []string{"reclaim", "--json", "--older-than", "0s"}
	for _, id := range ids {
		args = append(args, "--id", id)
	}
	v, err := query[struct{ Reclaimed []struct{ ID string } }](ctx, c, ids, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range v.Reclaimed {
		out = append(out, r.ID)
	}
	return out, nil
}

// Release gives an issue the actor holds back: open, unassigned, with note
// appended (why it came back).
func (c *Client) Release(ctx context.Context, id, actor, note string) (Issue, error) {
	return c.one(ctx, id, actor, "update", id, "--status", StatusOpen, "--assignee", "", "--append-notes", note, "--json")
}

// Block takes an issue the actor holds out of the work: blocked,
// unassigned, with note appended (why a person is needed).
func (c *Client) Block(ctx context.Context, id, actor, note string) (Issue, error) {
	return c.one(ctx, id, actor, "update", id, "--status", StatusBlocked, "--assignee", "", "--append-notes", note, "--json")
}

// AppendNotes appends text to an issue's notes.
func (c *Client) AppendNotes(ctx context.Context, id, text string) (Issue, error) {
	return c.one(ctx, id, "", "update", id, "--append-notes", text, "--json")
}

// SetStatus changes an issue's stored status.
func (c *Client) SetStatus(ctx context.Context, id, status string) (Issue, error) {
	return c.one(ctx, id, "", "update", id, "--status", status, "--json")
}

// one runs a bd command that changes issue id (as actor, when set) and
// returns the issue as bd answers it.
func (c *Client) one(ctx context.Context, id, actor string, args ...string) (Issue, error) {
	if actor != "" {
		args = append(args, "--actor", actor)
	}
	issues, err := query[[]Issue](ctx, c, []string{id}, args...)
	if err != nil {
		return Issue{}, err
	}
	if len(issues) == 0 {
		return Issue{}, &Error{Kind: KindBadOutput, Args: args, Msg: "empty answer for " + id}
	}
	return issues[0], nil
}

// Version returns bd's version ("1.3.0").
func (c *Client) Version(ctx context.Context) (string, error) {
	args := []string{"version", "--json"}
	v, err := query[struct{ Version string }](ctx, c, nil, args...)
	if err != nil {
		return "", err
	}
	if v.Version == "" {
		return "", &Error{Kind: KindBadOutput, Args: args, Msg: "no version field"}
	}
	return v.Version, nil
}

// query runs bd (run) and decodes its JSON answer.
func query[T any](ctx context.Context, c *Client, ids []string, args ...string) (T, error) {
	var v T
	out, err := c.run(ctx, ids, args)
	if err == nil {
		if err = Decode(out, &v); err != nil {
			err = &Error{Kind: KindBadOutput, Args: args, Msg: snippet(out), Err: err}
		}
	}
	return v, err
}

// run executes bd once, after checkID of the ids its arguments name, and
// classifies its failure.
func (c *Client) run(ctx context.Context, ids, args []string) ([]byte, error) {
	if err := checkID(args, ids...); err != nil {
		return nil, err
	}
	bin, timeout := cmp.Or(c.Bin, "bd"), cmp.Or(c.Timeout, DefaultTimeout)
	parent := ctx
	release, err := c.Slots.Acquire(ctx)
	if err != nil {
		e := &Error{Kind: KindBusy, Args: args, Code: -1, Msg: err.Error(), Err: err}
		if parent.Err() != nil {
			e.Kind, e.Msg = KindFailed, "interrupted while waiting for a bd slot"
		}
		return nil, e
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = c.WorkDir
	env := append(slices.Clip(c.env()), "BD_DISABLE_METRICS=1", "BD_NON_INTERACTIVE=1", "NO_COLOR=1")
	if c.Dir != "" {
		env = append(env, "BEADS_DIR="+c.Dir)
	}
	cmd.Env = env
	// bd runs in its own process group: SIGTERM at the timeout or cancel,
	// SIGKILL a second later; nothing outlives the call.
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	g := shell.NewContextGroup(cmd, shell.Terminate, time.Second)
	err = cmd.Run()
	g.Reap()
	if err == nil {
		return stdout.Bytes(), nil
	}
	e := &Error{Args: args, Code: -1, Err: err}
	var exitErr *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		e.Kind = KindMissing
		e.Msg = bin + " is not installed or not on PATH (set beads.bin or RUNTASKS_BD)"
	case parent.Err() != nil:
		e.Kind = KindFailed
		e.Msg = "interrupted; bd was stopped"
		e.Err = parent.Err()
	case ctx.Err() != nil:
		e.Kind = KindTimeout
		e.Msg = fmt.Sprintf("no answer within %s", timeout)
	case errors.As(err, &exitErr):
		e.Code = exitErr.ExitCode()
		e.Msg = message(stdout.Bytes(), stderr.Bytes())
		e.Kind = classify(e.Code, e.Msg)
		if e.Kind == KindNoStore {
			e.Msg += " (" + c.where() + ")"
		}
	default:
		e.Kind = KindFailed
		e.Msg = err.Error()
	}
	return nil, e
}

// message extracts bd's error: the JSON error object on stdout if any, else
// the first lines of stderr.
func message(stdout, stderr []byte) string {
	var obj struct {
		Error  string `json:"error"`
		Failed []struct {
			ID    string `json:"id"`
			Error string `json:"error"`
		} `json:"failed"`
	}
	for _, b := range [][]byte{stdout, stderr} {
		// stderr may hold a text line before a JSON object.
		if i := bytes.IndexByte(b, '{'); i >= 0 && json.Unmarshal(b[i:], &obj) == nil && obj.Error != "" {
			msg := obj.Error
			for _, f := range obj.Failed {
				msg += "; " + f.ID + ": " + f.Error
			}
			return msg
		}
	}
	return snippet(stderr)
}

func classify(code int, msg string) ErrorKind {
	lower := strings.ToLower(msg)
	switch {
	case code == 13:
		return KindConflict
	case strings.Contains(lower, "no beads database found"):
		return KindNoStore
	case slices.ContainsFunc(serverDown, func(w string) bool { return strings.Contains(lower, w) }):
		return KindUnavailable
	case strings.Contains(lower, "not found") || strings.Contains(lower, "no issue found") ||
		strings.Contains(lower, "no issues found"):
		return KindNotFound
	}
	return KindFailed
}

// serverDown are bd v1.3.0's words when its Dolt SQL server cannot be used
// (docs/scale.md): checked before "not found", which "database … not found
// on Dolt server" also says.
var serverDown = []string{
	"dolt server unreachable", "is unreachable", "circuit breaker is open",
	"connection refused", "i/o timeout", "invalid connection", "access denied",
	"on dolt server", "failed to open dolt store", "project identity mismatch",
	"write commit result indeterminate",
}

// snippet trims bd output for an error message: first lines, bounded.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// Decode reads bd's JSON answer into v, accepting both the bare payload and
// the {"schema_version","data"} envelope (BD_JSON_ENVELOPE=1, bd 2.0's
// default). An error object where v expects an array is an error. Into
// *[]Issue, each issue's dependencies become rows whichever shape bd
// printed (Dependency).
func Decode(out []byte, v any) error {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return errors.New("empty output")
	}
	if out[0] == '{' {
		var env struct {
			Data  json.RawMessage `json:"data"`
			Error string          `json:"error"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			return err
		}
		if env.Error != "" {
			return errors.New(env.Error)
		}
		if len(env.Data) > 0 {
			out = env.Data
		}
	}
	if err := json.Unmarshal(out, v); err != nil {
		return err
	}
	if issues, ok := v.(*[]Issue); ok {
		for _, is := range *issues {
			for j, d := range is.Dependencies {
				row := Dependency{IssueID: d.IssueID, DependsOnID: d.DependsOnID, Type: d.Type}
				if d.DependsOnID == "" && d.ID != "" { // bd show shape
					row = Dependency{IssueID: is.ID, DependsOnID: d.ID, Type: d.DependencyType, Status: d.Status}
				}
				is.Dependencies[j] = row
			}
		}
	}
	return nil
}
