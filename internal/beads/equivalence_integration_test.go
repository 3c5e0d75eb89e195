package beads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/beads/beadstest"
	"github.com/runtasks/runtasks/internal/state"
)

// TestIntegrationReadyEquivalence holds Client.Ready (the cheap answer) to
// bd ready --parent (the slow, exact one) with the real bd, on a generated
// store: two top-level epics with sub-epics nested three deep, tasks in
// every status, blocking dependencies, deferrals (a status, and a
// defer_until on a parent, which hides its children), parents closed while
// their children are open, top-level tasks, and the shapes of a real team's
// store both inside the epic and outside it (epics in progress, closed with
// --force while their tasks are open, deferred, deferred until a date, one
// not ready under another), most ids numbered under their parent's as bd
// numbers them. After the import and after each round of random changes
// (statuses, closes, deferrals of epics outside the epic, tasks and
// sub-epics moved in and out of the epic with bd update --parent, a second
// parent, new dependencies, new tasks) both answers are compared for the
// epic, the other epic, a sub-epic and an epic outside, and Subtree (what
// the engine counts) must hold every issue bd calls ready under it. Ready
// remembers which issues it read by id (a state directory, as runtasks
// does): each epic is asked twice a round, first with what the previous
// round read (before the changes), then with what the first read. On the
// embedded store the remembered issues come with the first read by id (the
// second stop reads by id once at most); on a store in server mode they are
// read beside bd ready (the second stop reads nothing after it). Beyond
// that it reads at most maxLinkReads lists of issues that are not ready
// before it asks bd ready --parent. The seed is logged; RUNTASKS_EQ_SEED
// replays one.
func TestIntegrationReadyEquivalence(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{beads.ModeEmbedded, beads.ModeServer} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var s *beadstest.Store
			if mode == beads.ModeServer {
				s = beadstest.NewServerStore(t, "eq", beadstest.StartDoltServer(t))
			} else {
				s = beadstest.NewStore(t, "eq")
			}
			readyEquivalence(t, s, mode == beads.ModeServer)
		})
	}
}

func readyEquivalence(t *testing.T, s *beadstest.Store, server bool) {
	g, rng, seed := newGenStore(t, s)
	fast, slow, calls := clients(t, s)
	// fast remembers, per epic, the issues it read by id (in the state
	// directory, as runtasks does).
	mem := &state.Store{Dir: t.TempDir()}
	fast.Links = mem
	ctx := context.Background()
	routes := map[string]int{}
	compare := func(round int) {
		t.Helper()
		for _, epic := range []string{g.epic, g.other, g.pick(rng, g.subEpicsOf(g.epic)), g.pick(rng, g.outside())} {
			// Two stops: the first reads ahead what the last stop on this
			// epic read (before this round's changes), the second what the
			// first read, on the same data.
			firstParent := false
			for stop := range 2 {
				ahead := len(mem.ReadyLinks(epic)) > 0
				os.Remove(calls)
				got, err := fast.Ready(ctx, epic)
				if err != nil {
					t.Fatalf("round %d: Ready(%s): %v", round, epic, err)
				}
				want, err := slow.ReadyParent(ctx, epic)
				if err != nil {
					t.Fatalf("round %d: bd ready --parent %s: %v", round, epic, err)
				}
				log, _ := os.ReadFile(calls)
				lists, parent := strings.Count(string(log), "list --json"), strings.Count(string(log), "--parent")
				route := "ready"
				if ahead && server {
					lists-- // the read ahead, beside bd ready
					route += "‖list"
				}
				route += strings.Repeat("+list", lists) + strings.Repeat("+parent", parent)
				routes[route]++
				// Every issue a chain names exists here: bd ready --parent is
				// asked only once the reads up the chains ran out. The second
				// stop finds all it needs in what it remembered: read beside
				// bd ready, or with its one read by id.
				again := lists
				if !server && ahead {
					again--
				}
				if lists > maxLinkReads || parent > 1 || parent == 1 && lists < maxLinkReads ||
					stop == 1 && !firstParent && again+parent > 0 {
					t.Errorf("round %d, epic %s, stop %d: bd calls\n%s", round, epic, stop, log)
				}
				firstParent = parent > 0
				if !slices.Equal(ids(got), ids(want)) {
					t.Errorf("round %d, epic %s (route %s): Ready = %v, bd ready --parent = %v\nseed %d\n%s",
						round, epic, route, ids(got), ids(want), seed, g.describe())
				}
				if !slices.Equal(order(got), order(want)) {
					t.Errorf("round %d, epic %s: order %v, bd's %v", round, epic, order(got), order(want))
				}
			}
			// The subtree the engine counts holds every issue bd calls ready
			// under the epic (same membership rule).
			want, err := slow.ReadyParent(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: bd ready --parent %s: %v", round, epic, err)
			}
			sub, err := slow.Subtree(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: Subtree(%s): %v", round, epic, err)
			}
			for _, id := range ids(want) {
				if !slices.Contains(ids(sub), id) {
					t.Errorf("round %d, epic %s: ready %s is not in Subtree %v\nseed %d\n%s", round, epic, id, ids(sub), seed, g.describe())
				}
			}
		}
	}
	compare(0)
	for round := 1; round <= 4; round++ {
		for range 5 {
			g.change(t, rng, s)
		}
		compare(round)
	}
	t.Logf("routes taken: %v", routes)
}

// newGenStore imports a generated store (generate) into s, a new real bd
// store with the prefix "eq". The seed is logged; RUNTASKS_EQ_SEED replays one.
func newGenStore(t *testing.T, s *beadstest.Store) (*genStore, *rand.Rand, uint64) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RUNTASKS_EQ_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("RUNTASKS_EQ_SEED: %v", err)
		}
	}
	t.Logf("seed %d (replay: RUNTASKS_EQ_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	g := generate(rng, "eq")
	jsonl := filepath.Join(t.TempDir(), "store.jsonl")
	if err := os.WriteFile(jsonl, g.jsonl(), 0o644); err != nil {
		t.Fatal(err)
	}
	s.BD("import", jsonl)
	return g, rng, seed
}

// clients are two bd clients on the store: counted runs a bd that logs its
// arguments, a line a call, to calls (which route each answer took); plain
// runs bd itself.
func clients(t *testing.T, s *beadstest.Store) (counted, plain *beads.Client, calls string) {
	t.Helper()
	calls = filepath.Join(t.TempDir(), "calls.log")
	bin := filepath.Join(t.TempDir(), "bd")
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexec " + s.Bin + " \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	counted = &beads.Client{Bin: bin, WorkDir: s.Root, Env: s.Env, Timeout: 30 * time.Second}
	plain = &beads.Client{WorkDir: s.Root, Env: s.Env, Timeout: 30 * time.Second}
	return counted, plain, calls
}

func order(issues []beads.Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.ID)
	}
	return out
}

// genStore is the generated store as the test believes it to be: enough to
// choose changes that bd accepts (no parent cycles).
type genStore struct {
	prefix      string
	epic, other string
	issues      []genIssue
	parent      map[string][]string
	epics       map[string]bool
	status      map[string]string
	kids        map[string]int // children numbered under each parent
	n           int
	log         []string
}

type genIssue struct {
	ID       string
	Type     string
	Status   string
	Parent   string
	Blocks   []string
	Deferred bool // defer_until in the future
}

// maxLinkReads is beads' bound on the lists Ready reads up chains of issues
// that are not ready.
const maxLinkReads = 3

var statuses = []string{beads.StatusOpen, beads.StatusOpen, beads.StatusOpen, beads.StatusInProgress,
	beads.StatusBlocked, beads.StatusDeferred, beads.StatusClosed}

// generate makes about 120 issues: two epics, each with sub-epics three
// deep, tasks under every level, top-level tasks, and in the epic, in the
// other one and at the top level the shapes of a real team's store (shape).
// Two children in three are numbered under their parent (E.3, as bd
// numbers them), the rest get ids of their own.
func generate(rng *rand.Rand, prefix string) *genStore {
	g := &genStore{prefix: prefix, parent: map[string][]string{}, epics: map[string]bool{}, status: map[string]string{},
		kids: map[string]int{}}
	// add adds an issue, of a random status when st is empty.
	add := func(typ, parent, st string) string {
		g.n++
		id := fmt.Sprintf("%s-g%d", prefix, g.n)
		if parent != "" && rng.IntN(3) > 0 {
			g.kids[parent]++
			id = fmt.Sprintf("%s.%d", parent, g.kids[parent])
		}
		deferred := false
		if st == "" {
			st = statuses[rng.IntN(len(statuses))]
			if typ == beads.TypeEpic && rng.IntN(3) > 0 {
				st = beads.StatusOpen
			}
			deferred = st == beads.StatusOpen && rng.IntN(12) == 0
		}
		is := genIssue{ID: id, Type: typ, Status: st, Parent: parent, Deferred: deferred}
		if len(g.issues) > 0 && rng.IntN(5) == 0 {
			is.Blocks = []string{g.issues[rng.IntN(len(g.issues))].ID}
		}
		g.issues = append(g.issues, is)
		if parent != "" {
			g.parent[id] = []string{parent}
		}
		g.status[id] = st
		if typ == beads.TypeEpic {
			g.epics[id] = true
		}
		return id
	}
	var tree func(parent string, depth int)
	tree = func(parent string, depth int) {
		for range 2 + rng.IntN(3) {
			add("task", parent, "")
		}
		if depth < 3 {
			for range 1 + rng.IntN(2) {
				tree(add(beads.TypeEpic, parent, ""), depth+1)
			}
		}
	}
	// shape adds under parent (or at the top) an epic in progress, one
	// closed while its tasks are open, one deferred, one deferred until a
	// date (its children are not ready), and an epic in progress holding
	// a closed one: each with open tasks, whose place hangs on epics that
	// are not ready.
	shape := func(parent string) {
		withTasks := func(e string) {
			for range 2 {
				add("task", e, beads.StatusOpen)
			}
		}
		for _, st := range []string{beads.StatusInProgress, beads.StatusClosed, beads.StatusDeferred} {
			withTasks(add(beads.TypeEpic, parent, st))
		}
		until := add(beads.TypeEpic, parent, beads.StatusDeferred)
		g.issues[len(g.issues)-1].Deferred = true
		withTasks(until)
		outer := add(beads.TypeEpic, parent, beads.StatusInProgress)
		withTasks(outer)
		withTasks(add(beads.TypeEpic, outer, beads.StatusClosed))
	}
	g.epic = add(beads.TypeEpic, "", beads.StatusOpen)
	tree(g.epic, 1)
	shape(g.epic)
	g.other = add(beads.TypeEpic, "", "")
	tree(g.other, 2)
	shape(g.other)
	shape("")
	for range 4 {
		add("task", "", "")
	}
	return g
}

func (g *genStore) jsonl() []byte {
	var b strings.Builder
	for i, is := range g.issues {
		ts := time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339)
		m := map[string]any{"id": is.ID, "title": "generated " + is.ID, "status": is.Status, "priority": i % 3,
			"issue_type": is.Type, "created_at": ts, "updated_at": ts}
		if is.Status == beads.StatusClosed {
			m["closed_at"] = ts
		}
		if is.Deferred {
			m["defer_until"] = "2099-01-01T00:00:00Z"
		}
		var deps []any
		if is.Parent != "" {
			deps = append(deps, map[string]any{"issue_id": is.ID, "depends_on_id": is.Parent, "type": "parent-child"})
		}
		for _, bl := range is.Blocks {
			deps = append(deps, map[string]any{"issue_id": is.ID, "depends_on_id": bl, "type": "blocks"})
		}
		if deps != nil {
			m["dependencies"] = deps
		}
		line, _ := json.Marshal(m)
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func (g *genStore) pick(rng *rand.Rand, from []string) string {
	if len(from) == 0 {
		return g.epic
	}
	return from[rng.IntN(len(from))]
}

func (g *genStore) ids() []string {
	var out []string
	for id := range g.status {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// under reports whether id has root as an ancestor (or is root).
func (g *genStore) under(id, root string) bool {
	if id == root {
		return true
	}
	for _, p := range g.parent[id] {
		if g.under(p, root) {
			return true
		}
	}
	return false
}

func (g *genStore) subEpicsOf(root string) []string {
	var out []string
	for _, id := range g.ids() {
		if g.epics[id] && id != root && g.under(id, root) {
			out = append(out, id)
		}
	}
	return out
}

// outside lists the epics that are not under the epic.
func (g *genStore) outside() []string {
	var out []string
	for _, id := range g.ids() {
		if g.epics[id] && !g.under(id, g.epic) {
			out = append(out, id)
		}
	}
	return out
}

// change makes one random change with the real bd.
func (g *genStore) change(t *testing.T, rng *rand.Rand, s *beadstest.Store) {
	t.Helper()
	all := g.ids()
	id := g.pick(rng, all)
	// do runs one change; bd refusing a dependency cycle, a block on a
	// descendant (which blocks cascade to) or on an ancestor ("already a
	// child of": a deadlock), or a new parent the issue already blocks on
	// ("already exists with type"), is no failure.
	do := func(args ...string) bool {
		cmd := exec.Command(s.Bin, append(args, "--json")...)
		cmd.Dir, cmd.Env = s.Root, s.Env
		out, err := cmd.CombinedOutput()
		if err != nil && (strings.Contains(string(out), "cycle") || strings.Contains(string(out), "descendant") ||
			strings.Contains(string(out), "already a child of") || strings.Contains(string(out), "already exists with type")) {
			return false
		}
		if err != nil {
			t.Fatalf("bd %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		g.log = append(g.log, strings.Join(args, " "))
		return true
	}
	switch rng.IntN(10) {
	case 0, 1: // statuses, several at once
		st := []string{beads.StatusOpen, beads.StatusInProgress, beads.StatusBlocked, beads.StatusDeferred}[rng.IntN(4)]
		ids := []string{id, g.pick(rng, all), g.pick(rng, all)}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		do(append(append([]string{"update"}, ids...), "--status", st)...)
		for _, i := range ids {
			g.status[i] = st
		}
	case 2: // close, children or not
		if g.status[id] == beads.StatusClosed {
			return
		}
		do("close", id, "--force", "--reason", "generated")
		g.status[id] = beads.StatusClosed
	case 3, 4: // move a task or a sub-epic somewhere else, or to the top
		to := g.pick(rng, append(slices.DeleteFunc(slices.Clone(all), func(p string) bool { return !g.epics[p] || g.under(p, id) }), ""))
		if rng.IntN(6) == 0 {
			to = ""
		}
		if to != "" && g.under(to, id) || !do("update", id, "--parent", to) {
			return
		}
		if to == "" {
			delete(g.parent, id)
		} else {
			g.parent[id] = []string{to}
		}
	case 5: // a second parent
		to := g.pick(rng, slices.DeleteFunc(slices.Clone(all), func(p string) bool { return !g.epics[p] || g.under(p, id) || slices.Contains(g.parent[id], p) }))
		if to == id || g.under(to, id) || slices.Contains(g.parent[id], to) {
			return
		}
		if !do("dep", "add", id, to, "--type", "parent-child") {
			return
		}
		g.parent[id] = append(g.parent[id], to)
	case 6: // a new blocker
		blocker := g.pick(rng, all)
		if blocker == id {
			return
		}
		do("dep", "add", id, blocker)
	case 7: // a new task somewhere
		parent := g.pick(rng, append(g.subEpicsOf(g.epic), g.epic, g.other))
		out := s.BD("create", "new task", "--parent", parent, "--json")
		g.log = append(g.log, "create --parent "+parent)
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
			t.Fatalf("bd create: %q: %v", out, err)
		}
		g.parent[v.ID] = []string{parent}
		g.status[v.ID] = beads.StatusOpen
	case 8, 9: // an epic outside the epic changes: worked on, closed with its tasks open, deferred, back
		e := g.pick(rng, g.outside())
		if e == g.epic {
			return
		}
		switch rng.IntN(6) {
		case 0:
			do("update", e, "--status", beads.StatusInProgress)
			g.status[e] = beads.StatusInProgress
		case 1:
			if g.status[e] != beads.StatusClosed {
				do("close", e, "--force", "--reason", "generated")
				g.status[e] = beads.StatusClosed
			}
		case 2:
			do("defer", e)
			g.status[e] = beads.StatusDeferred
		case 3:
			do("defer", e, "--until", "2099-01-01")
			g.status[e] = beads.StatusDeferred
		case 4:
			if g.status[e] == beads.StatusDeferred {
				do("undefer", e)
				g.status[e] = beads.StatusOpen
			}
		case 5:
			if g.status[e] == beads.StatusClosed {
				do("reopen", e)
				g.status[e] = beads.StatusOpen
			}
		}
	}
}

// describe is the store's shape and the changes made, for a failure.
func (g *genStore) describe() string {
	var b strings.Builder
	for _, id := range g.ids() {
		fmt.Fprintf(&b, "  %s %s parents %v\n", id, g.status[id], g.parent[id])
	}
	b.WriteString("changes:\n  " + strings.Join(g.log, "\n  ") + "\n")
	return b.String()
}
