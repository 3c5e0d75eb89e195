package beads_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
)

// TestReadingRoutes: which questions a Reading answers from its one
// bd list --all and which it asks bd (bd ready), by what the store holds.
func TestReadingRoutes(t *testing.T) {
	const (
		epic   = `{"id":"x-1","title":"E","status":"open","priority":1,"issue_type":"epic","created_at":"2026-01-01T00:00:00Z"}`
		open2  = `{"id":"x-1.2","title":"B","status":"open","priority":2,"issue_type":"task","parent":"x-1","created_at":"2026-01-01T00:00:02Z"}`
		open1  = `{"id":"x-1.1","title":"A","status":"open","priority":2,"issue_type":"task","parent":"x-1","created_at":"2026-01-01T00:00:01Z"}`
		urgent = `{"id":"x-1.3","title":"C","status":"open","priority":0,"issue_type":"task","parent":"x-1","created_at":"2026-01-01T00:00:09Z"}`
		closed = `{"id":"x-1.4","title":"D","status":"closed","priority":1,"issue_type":"task","parent":"x-1"}`
		busy   = `{"id":"x-1.5","title":"E","status":"in_progress","priority":1,"issue_type":"task","parent":"x-1"}`
	)
	soon := time.Now().Add(20 * time.Second).UTC().Format(time.RFC3339)
	blockedBy := func(id, blocker, typ string) string {
		return `{"id":"` + id + `","title":"T","status":"open","priority":1,"issue_type":"task","parent":"x-1","dependencies":[` +
			`{"issue_id":"` + id + `","depends_on_id":"` + blocker + `","type":"` + typ + `"}]}`
	}
	list := func(issues ...string) string { return "[" + strings.Join(issues, ",") + "]" }
	for _, tc := range []struct {
		name  string
		list  string
		ready []string // Reading.Ready's answer, in order
		calls string   // the bd calls, Tally included
		tally beads.Tally
	}{
		{"ready work: one read, bd's order", list(epic, open2, open1, urgent, closed),
			[]string{"x-1.3", "x-1.1", "x-1.2"}, "list", beads.Tally{Closed: 1, Total: 4}},
		{"all closed: one read, nothing ready", list(epic, closed),
			nil, "list", beads.Tally{Closed: 1, Total: 1}},
		{"work left, none ready: bd is asked", list(epic, busy, closed),
			[]string{"from-bd"}, "list ready", beads.Tally{Closed: 1, Total: 2}},
		{"an open blocker blocks", list(epic, open1, blockedBy("x-1.6", "x-1.1", "blocks")),
			[]string{"x-1.1"}, "list", beads.Tally{Total: 2}},
		{"a conditional blocker blocks", list(epic, open1, blockedBy("x-1.6", "x-1.1", "conditional-blocks")),
			[]string{"x-1.1"}, "list", beads.Tally{Total: 2}},
		{"a related issue does not", list(epic, open1, blockedBy("x-1.6", "x-1.1", "related")),
			[]string{"x-1.6", "x-1.1"}, "list", beads.Tally{Total: 2}},
		{"a waits-for gate: bd is asked", list(epic, open1, blockedBy("x-1.6", "x-1.1", "waits-for")),
			[]string{"from-bd"}, "list ready", beads.Tally{Total: 2}},
		{"a blocker the list does not show: bd is asked", list(epic, open1, blockedBy("x-1.6", "x-9", "blocks")),
			[]string{"from-bd"}, "list ready", beads.Tally{Total: 2}},
		{"a custom status: bd is asked", list(epic, open1, strings.Replace(busy, "in_progress", "review", 1)),
			[]string{"from-bd"}, "list ready", beads.Tally{Total: 2}},
		{"a deferral about to end: bd is asked", list(epic, open1, strings.Replace(open2, `"status"`, `"defer_until":"`+soon+`","status"`, 1)),
			[]string{"from-bd"}, "list ready", beads.Tally{Total: 2}},
		{"a pinned issue: bd is asked", list(epic, open1, strings.Replace(open2, `"status"`, `"pinned":true,"status"`, 1)),
			[]string{"from-bd"}, "list ready", beads.Tally{Total: 2}},
		{"an ephemeral issue: bd is asked", list(epic, open1, strings.Replace(open2, `"status"`, `"ephemeral":true,"status"`, 1)),
			[]string{"from-bd"}, "list ready", beads.Tally{Total: 2}},
		{"a molecule is not ready work", list(epic, strings.Replace(open1, `"task"`, `"molecule"`, 1), busy),
			[]string{"from-bd"}, "list ready", beads.Tally{Total: 2}},
		// A custom status elsewhere: bd is asked, and its answer is placed
		// with the reading's links, a sub-epic closed while its task is open
		// included (Client.Ready alone would list the store again).
		{"bd's ready work under a closed sub-epic", list(epic, `{"id":"x-1.7","title":"S","status":"closed","issue_type":"epic","parent":"x-1"}`,
			`{"id":"x-1.7.1","title":"T","status":"open","parent":"x-1.7"}`, `{"id":"x-2.1","title":"U","status":"review","parent":"x-2"}`, `{"id":"x-2","title":"O","status":"open","issue_type":"epic"}`),
			[]string{"x-1.7.1"}, "list ready", beads.Tally{Closed: 1, Total: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready := `[{"id":"from-bd","title":"F","status":"open","priority":1,"parent":"x-1"}]`
			if strings.Contains(tc.list, `"x-1.7.1"`) {
				ready = `[{"id":"x-2","title":"O","status":"open","issue_type":"epic"},{"id":"x-1.7.1","title":"T","status":"open","parent":"x-1.7"}]`
			}
			c, dir := fake(t, map[string]string{"list.json": tc.list, "ready.json": ready})
			rd := c.Reading()
			ctx := context.Background()
			got, err := rd.Ready(ctx, "x-1")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(order(got), " ") != strings.Join(tc.ready, " ") {
				t.Errorf("Ready = %v, want %v", order(got), tc.ready)
			}
			tally, err := rd.Tally(ctx, "x-1")
			if err != nil || tally != tc.tally {
				t.Errorf("Tally = %+v, %v; want %+v", tally, err, tc.tally)
			}
			if got := calls(t, dir); got != tc.calls {
				t.Errorf("bd calls: %q, want %q", got, tc.calls)
			}
		})
	}
}

// TestReadingAsksAgain: the engine's second question (its reads seemed to
// race) goes to bd, and a failed read is an error, never "nothing ready".
func TestReadingAsksAgain(t *testing.T) {
	c, dir := fake(t, map[string]string{
		"list.json":  `[{"id":"x-1","title":"E","status":"open","issue_type":"epic"},{"id":"x-1.1","title":"A","status":"open","parent":"x-1"}]`,
		"ready.json": `[]`})
	rd := c.Reading()
	ctx := context.Background()
	if got, err := rd.Ready(ctx, "x-1"); err != nil || len(got) != 1 {
		t.Fatalf("first Ready = %v, %v", order(got), err)
	}
	if got, err := rd.Ready(ctx, "x-1"); err != nil || len(got) != 0 {
		t.Fatalf("second Ready = %v, %v; want bd's empty answer", order(got), err)
	}
	if got := calls(t, dir); got != "list ready" {
		t.Errorf("bd calls: %q", got)
	}

	c, _ = fake(t, map[string]string{"list.rc": "1", "list.stderr": "Error: database is locked"})
	rd = c.Reading()
	_, err := rd.Ready(ctx, "x-1")
	var be *beads.Error
	if !errors.As(err, &be) {
		t.Fatalf("Ready after a failed read = %v, want a *beads.Error", err)
	}
	if _, err := rd.Tally(ctx, "x-1"); err == nil {
		t.Error("Tally after a failed read: no error")
	}
}

// calls lists the bd subcommands the fake answered, in order.
func calls(t *testing.T, dir string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return strings.Join(out, " ")
}
