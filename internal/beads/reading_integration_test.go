package beads_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// TestIntegrationReadingEquivalence holds a Reading (one bd list --all) to
// bd itself with the real bd, on the generated store of
// TestIntegrationReadyEquivalence with, besides its changes, conditional
// blocks, other dependency types, hooked and pinned statuses and tasks of
// types bd ready leaves out. After each round, for the epic, the other epic
// and a sub-epic: the reading's own ready list, where it says it could
// judge, equals bd ready --parent in members and order; Ready, Subtree and
// Tally equal the client's; and a reading that finds work ready answers the
// decision and the count with one bd process. The seed is logged;
// RUNTASKS_EQ_SEED replays one.
func TestIntegrationReadingEquivalence(t *testing.T) {
	t.Parallel()
	g, s, rng, seed := newGenStore(t, "rd")
	// A type bd ready leaves out, listed (a gate is not listed at all).
	s.BD("create", "a molecule", "--type", "molecule", "--parent", g.epic)
	counted, c, calls := clients(t, s)
	ctx := context.Background()
	judged, fellBack, oneCall := 0, 0, 0
	compare := func(round int) {
		t.Helper()
		for _, epic := range []string{g.epic, g.other, g.pick(rng, g.subEpicsOf(g.epic))} {
			want, err := c.ReadyParent(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: bd ready --parent %s: %v", round, epic, err)
			}
			local, exact, err := c.Reading().LocalReady(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: reading: %v", round, err)
			}
			if exact {
				judged++
				if !slices.Equal(order(local), order(want)) {
					t.Errorf("round %d, epic %s: the reading's ready = %v, bd ready --parent = %v\nseed %d\n%s",
						round, epic, order(local), order(want), seed, g.describe())
				}
			} else {
				fellBack++
			}

			os.Remove(calls)
			rd := counted.Reading()
			got, err := rd.Ready(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: Reading.Ready(%s): %v", round, epic, err)
			}
			if !slices.Equal(order(got), order(want)) {
				t.Errorf("round %d, epic %s: Reading.Ready = %v, bd ready --parent = %v\nseed %d\n%s",
					round, epic, order(got), order(want), seed, g.describe())
			}
			tally, err := rd.Tally(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: Reading.Tally(%s): %v", round, epic, err)
			}
			log, _ := os.ReadFile(calls)
			if len(got) > 0 && exact {
				if n := strings.Count(string(log), "\n"); n != 1 {
					t.Errorf("round %d, epic %s: ready work and the count took %d bd calls, want 1:\n%s", round, epic, n, log)
				}
				oneCall++
			}
			if strings.Contains(string(log), "list --json --limit 0\n") {
				t.Errorf("round %d, epic %s: the reading listed the store a second time:\n%s", round, epic, log)
			}
			if wantTally, err := c.Tally(ctx, epic); err != nil || tally != wantTally {
				t.Errorf("round %d, epic %s: Reading.Tally = %+v, Client.Tally = %+v (%v)", round, epic, tally, wantTally, err)
			}
			sub, err := rd.Subtree(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: Reading.Subtree(%s): %v", round, epic, err)
			}
			wantSub, err := c.Subtree(ctx, epic)
			if err != nil {
				t.Fatalf("round %d: Subtree(%s): %v", round, epic, err)
			}
			if summary(sub) != summary(wantSub) {
				t.Errorf("round %d, epic %s: Reading.Subtree\n%s\nClient.Subtree\n%s", round, epic, summary(sub), summary(wantSub))
			}
		}
	}
	compare(0)
	for round := 1; round <= 4; round++ {
		for range 6 {
			if rng.IntN(3) == 0 {
				g.changeMore(t, rng, s)
			} else {
				g.change(t, rng, s)
			}
		}
		compare(round)
	}
	// A deferral that ends within the minute: the reading cannot judge the
	// store and asks bd ready, placing its answer with the reading's links.
	for _, is := range g.issues {
		if s.BDMaybe("update", is.ID, "--defer", time.Now().Add(40*time.Second).UTC().Format(time.RFC3339)) {
			g.log = append(g.log, "update "+is.ID+" --defer (in 40 s)")
			break
		}
	}
	judgedBefore := judged
	compare(5)
	t.Logf("the reading judged %d answers itself (%d with ready work in one bd call), fell back on %d", judged, oneCall, fellBack)
	if judged == 0 || oneCall == 0 {
		t.Errorf("the reading never answered by itself (judged %d, one call %d): this test proved nothing", judged, oneCall)
	}
	if fellBack == 0 || judged != judgedBefore {
		t.Errorf("with a deferral ending within the minute the reading judged %d answers itself, want none (fell back on %d)", judged-judgedBefore, fellBack)
	}
}

// summary is a subtree as id, status and blockers, sorted.
func summary(issues []beads.Issue) string {
	var lines []string
	for _, is := range issues {
		bl := slices.Clone(is.BlockedBy)
		slices.Sort(bl)
		lines = append(lines, is.ID+" "+is.Status+" "+strings.Join(bl, ","))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// changeMore makes one change of the kinds bd ready judges besides
// change's: a conditional blocker, a dependency that does not block, a
// hooked or pinned status, a task of a type bd ready leaves out.
func (g *genStore) changeMore(t *testing.T, rng *rand.Rand, s *beadstest.Store) {
	t.Helper()
	all := g.ids()
	id, other := g.pick(rng, all), g.pick(rng, all)
	switch rng.IntN(4) {
	case 0:
		if id != other {
			s.BDMaybe("dep", "add", id, other, "--type", []string{"conditional-blocks", "related", "tracks", "discovered-from"}[rng.IntN(4)])
			g.log = append(g.log, "dep add "+id+" "+other)
		}
	case 1:
		st := []string{beads.StatusHooked, beads.StatusPinned}[rng.IntN(2)]
		if s.BDMaybe("update", id, "--status", st) {
			g.status[id] = st
			g.log = append(g.log, "update "+id+" --status "+st)
		}
	case 2:
		typ := []string{"bug", "chore", "feature", "decision", "gate", "molecule"}[rng.IntN(6)]
		parent := g.pick(rng, append(g.subEpicsOf(g.epic), g.epic))
		if s.BDMaybe("create", "typed "+typ, "--type", typ, "--parent", parent) {
			g.log = append(g.log, "create --type "+typ+" --parent "+parent)
		}
	case 3:
		if g.status[id] != beads.StatusClosed && s.BDMaybe("update", id, "--status", beads.StatusOpen) {
			g.status[id] = beads.StatusOpen
			g.log = append(g.log, "update "+id+" --status open")
		}
	}
}
