package beads_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// The fake bd is this test binary: with FAKEBD_MAIN=1 it runs beadstest.Main.
func TestMain(m *testing.M) {
	if os.Getenv("FAKEBD_MAIN") == "1" {
		os.Exit(beadstest.Main())
	}
	if dir := os.Getenv("SLOTHOLDER_DIR"); dir != "" {
		os.Exit(holdSlot(dir))
	}
	os.Exit(m.Run())
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ids(issues []beads.Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.ID)
	}
	slices.Sort(out)
	return out
}

// testdata holds real bd v1.3.0 output from a store with epic tx-220: tasks
// .1 (open, blocked by .7.1), .2 in_progress, .3 blocked, .4 deferred,
// .5 closed, .6 pinned, sub-epic .7 with .7.1, and an unrelated tx-mu1.
func TestDecodeCaptured(t *testing.T) {
	for _, name := range []string{"ready.json", "ready-envelope.json"} {
		var got []beads.Issue
		if err := beads.Decode(read(t, name), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := []string{"tx-220.7", "tx-220.7.1"}; !slices.Equal(ids(got), want) {
			t.Errorf("%s: ids %v, want %v", name, ids(got), want)
		}
		if got[0].Parent == "" || got[0].Status != beads.StatusOpen || got[0].CreatedAt.IsZero() {
			t.Errorf("%s: fields not decoded: %+v", name, got[0])
		}
	}
	for _, name := range []string{"show.json", "show-envelope.json"} {
		var got []beads.Issue
		if err := beads.Decode(read(t, name), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := []beads.Dependency{
			{IssueID: "tx-220.1", DependsOnID: "tx-220.7.1", Type: "blocks", Status: "open"},
			{IssueID: "tx-220.1", DependsOnID: "tx-220", Type: "parent-child", Status: "open"},
		}
		if len(got) != 1 || !slices.Equal(got[0].Dependencies, want) {
			t.Errorf("%s: dependencies %+v, want %+v", name, got[0].Dependencies, want)
		}
	}
	var blocked []beads.Issue
	if err := beads.Decode(read(t, "blocked.json"), &blocked); err != nil {
		t.Fatal(err)
	}
	if len(blocked) != 1 || !slices.Equal(blocked[0].BlockedBy, []string{"tx-220.7.1"}) {
		t.Errorf("blocked: %+v", blocked)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, out := range []string{
		"",
		"not json",
		`{"error":"no issues found matching the provided IDs","schema_version":1}`,
		`{"schema_version":1}`,
		`[{"id":`,
	} {
		var got []beads.Issue
		if err := beads.Decode([]byte(out), &got); err == nil {
			t.Errorf("Decode(%q) = %v, want an error", out, got)
		}
	}
}

// fake returns a client running the fake bd with answers from files.
func fake(t *testing.T, files map[string]string) (*beads.Client, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "FAKEBD_MAIN=1", "FAKEBD_DIR="+dir)
	return &beads.Client{Bin: exe, Env: env, Timeout: 2 * time.Second}, dir
}

func TestSubtreeFromCapturedList(t *testing.T) {
	c, dir := fake(t, map[string]string{"list.json": string(read(t, "list.json"))})
	got, err := c.Subtree(context.Background(), "tx-220")
	if err != nil {
		t.Fatal(err)
	}
	// Closed .5 and pinned .6 are not listed; the unrelated tx-mu1 and the
	// epic itself are not descendants; grandchild .7.1 is.
	want := []string{"tx-220.1", "tx-220.2", "tx-220.3", "tx-220.4", "tx-220.7", "tx-220.7.1"}
	if !slices.Equal(ids(got), want) {
		t.Errorf("Subtree = %v, want %v", ids(got), want)
	}
	for _, is := range got {
		wantBlocked := is.ID == "tx-220.1" || is.ID == "tx-220.3"
		if is.Blocked() != wantBlocked {
			t.Errorf("%s Blocked() = %v (status %s, blocked by %v)", is.ID, is.Blocked(), is.Status, is.BlockedBy)
		}
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
	if string(calls) != "list --json --limit 0\n" {
		t.Errorf("bd calls = %q, want one list query", calls)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		files map[string]string
		call  func(*beads.Client) error
		kind  beads.ErrorKind
		msg   string
	}{
		{
			name:  "no store",
			files: map[string]string{"ready.stderr": string(read(t, "nostore.stderr")), "ready.rc": "1"},
			call:  func(c *beads.Client) error { _, err := c.Ready(ctx, "tx-1"); return err },
			kind:  beads.KindNoStore, msg: "no beads database found",
		},
		{
			name: "unknown issue",
			files: map[string]string{
				"show-tx-zzz.json": string(read(t, "show-unknown.stdout")), "show-tx-zzz.stderr": string(read(t, "show-unknown.stderr")), "show-tx-zzz.rc": "1",
			},
			call: func(c *beads.Client) error { _, err := c.Show(ctx, "tx-zzz"); return err },
			kind: beads.KindNotFound, msg: "no issues found matching the provided IDs",
		},
		{
			name:  "garbage on success",
			files: map[string]string{"ready.json": "Showing 3 issues\n"},
			call:  func(c *beads.Client) error { _, err := c.Ready(ctx, "tx-1"); return err },
			kind:  beads.KindBadOutput, msg: "Showing 3 issues",
		},
		{
			name:  "error object on success",
			files: map[string]string{"list.json": `{"error":"database is locked","schema_version":1}`},
			call:  func(c *beads.Client) error { _, err := c.Subtree(ctx, "tx-1"); return err },
			kind:  beads.KindBadOutput, msg: "database is locked",
		},
		{
			name:  "crash",
			files: map[string]string{"ready.stderr": "panic: runtime error\n", "ready.rc": "2"},
			call:  func(c *beads.Client) error { _, err := c.Ready(ctx, "tx-1"); return err },
			kind:  beads.KindFailed, msg: "exit status 2: panic: runtime error",
		},
		{
			name:  "guard mismatch",
			files: map[string]string{"update.stderr": `{"error":"1 of 1 issues failed to update","failed":[{"id":"tx-1","error":"claimed by bob","guard_mismatch":true}]}`, "update.rc": "13"},
			call:  func(c *beads.Client) error { _, err := c.ClaimID(ctx, "tx-1", "alice"); return err },
			kind:  beads.KindConflict, msg: "tx-1: claimed by bob",
		},
		// bd v1.3.0 in server mode (docs/scale.md): the server down, its
		// circuit breaker open, a lost commit, a wrong database (which says
		// "not found" too), access denied: unavailable, never "no work".
		{
			name:  "server down",
			files: map[string]string{"ready.stderr": string(read(t, "server-down.stderr")), "ready.rc": "1"},
			call:  func(c *beads.Client) error { _, err := c.Ready(ctx, "tx-1"); return err },
			kind:  beads.KindUnavailable, msg: "Dolt server unreachable at 127.0.0.1:",
		},
		{
			name:  "circuit breaker",
			files: map[string]string{"show.stderr": "Error: failed to open database: dolt circuit breaker is open: server appears down, failing fast (cooldown 5s)\n", "show.rc": "1"},
			call:  func(c *beads.Client) error { _, err := c.Show(ctx, "tx-1"); return err },
			kind:  beads.KindUnavailable, msg: "circuit breaker is open",
		},
		{
			name:  "commit lost with the connection",
			files: map[string]string{"update.json": `{"error": "write commit result indeterminate after connection loss (not retried to avoid double-apply): commit write tx: invalid connection: write commit result indeterminate", "schema_version": 1}`, "update.rc": "1"},
			call:  func(c *beads.Client) error { _, err := c.ClaimID(ctx, "tx-1", "a"); return err },
			kind:  beads.KindUnavailable, msg: "indeterminate",
		},
		{
			name:  "no such database on the server",
			files: map[string]string{"show.stderr": "Error: failed to open database: database \"nosuchdb\" not found on Dolt server at 198.18.0.10:3307\n", "show.rc": "1"},
			call:  func(c *beads.Client) error { _, err := c.Show(ctx, "tx-1"); return err },
			kind:  beads.KindUnavailable, msg: "not found on Dolt server",
		},
		{
			name:  "access denied",
			files: map[string]string{"list.stderr": "Error: failed to open database: failed to check if database \"sc\" exists on server 198.18.0.10:3307: Error 1045 (28000): Access denied for user 'beads'\n", "list.rc": "1"},
			call:  func(c *beads.Client) error { _, err := c.Subtree(ctx, "tx-1"); return err },
			kind:  beads.KindUnavailable, msg: "Access denied",
		},
		{
			name:  "hang",
			files: map[string]string{"ready.sleep": "1m", "ready.json": "[]"},
			call: func(c *beads.Client) error {
				c.Timeout = 300 * time.Millisecond
				_, err := c.Ready(ctx, "tx-1")
				return err
			},
			kind: beads.KindTimeout, msg: "no answer within 300ms",
		},
		{
			name:  "missing binary",
			files: map[string]string{},
			call: func(c *beads.Client) error {
				c.Bin = filepath.Join(t.TempDir(), "no-such-bd")
				_, err := c.Ready(ctx, "tx-1")
				return err
			},
			kind: beads.KindMissing, msg: "not installed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := fake(t, tt.files)
			err := tt.call(c)
			var be *beads.Error
			if !errors.As(err, &be) {
				t.Fatalf("error %v (%T), want *beads.Error", err, err)
			}
			if be.Kind != tt.kind {
				t.Errorf("kind %q, want %q (%v)", be.Kind, tt.kind, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not carry %q", err, tt.msg)
			}
		})
	}
}

// memory is a beads.LinkMemory in a map, counting writes.
type memory struct {
	mu     sync.Mutex
	ids    map[string][]string
	writes int
}

func (m *memory) ReadyLinks(epic string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids[epic]
}

func (m *memory) SetReadyLinks(epic string, ids []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	m.ids[epic] = ids
	return nil
}

// TestReadyRemembers: Client.Ready remembers which issues it read by id
// for the epic and reads them again at the next stop, writing the memory
// only when it changes, and forgets them once they are not needed. On a
// store in server mode (its metadata.json says so) they are read beside bd
// ready; otherwise with the first read by id, so not at all when none is
// needed. Ids from the memory that bd could read as options are never
// passed.
func TestReadyRemembers(t *testing.T) {
	for _, mode := range []string{beads.ModeEmbedded, beads.ModeServer} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			ready := `[{"id":"tx-1","status":"open","issue_type":"epic"},{"id":"tx-1.1","status":"open","parent":"tx-1"},` +
				`{"id":"tx-9.1","status":"open","parent":"tx-9"}]`
			c, dir := fake(t, map[string]string{"ready.json": ready, "list.json": `[{"id":"tx-9","status":"in_progress"}]`})
			c.Dir = filepath.Join(t.TempDir(), ".beads")
			if err := os.MkdirAll(c.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			meta := `{"database":"dolt","backend":"dolt","dolt_mode":"` + mode + `","dolt_database":"tx"}`
			if err := os.WriteFile(filepath.Join(c.Dir, "metadata.json"), []byte(meta), 0o644); err != nil {
				t.Fatal(err)
			}
			m := &memory{ids: map[string][]string{}}
			c.Links = m
			calls := func() []string {
				b, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
				os.Remove(filepath.Join(dir, "calls.log"))
				var out []string
				for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					if l != "" {
						out = append(out, strings.Fields(l)[0]+" "+l[strings.LastIndexByte(l, ' ')+1:])
					}
				}
				return out
			}
			for stop := range 3 {
				got, err := c.Ready(ctx, "tx-1")
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(got), []string{"tx-1.1"}) {
					t.Errorf("stop %d: Ready = %v", stop, ids(got))
				}
				// bd ready, then the in-progress epic's link; from the
				// second stop on, both at once in server mode.
				cs, want := calls(), []string{"ready 0", "list tx-9"}
				if stop > 0 && mode == beads.ModeServer {
					slices.Sort(cs)
					want = []string{"list tx-9", "ready 0"}
				}
				if !slices.Equal(cs, want) {
					t.Errorf("stop %d: bd calls %q, want %q", stop, cs, want)
				}
				if !slices.Equal(m.ids["tx-1"], []string{"tx-9"}) || m.writes != 1 {
					t.Errorf("stop %d: remembered %q in %d writes, want tx-9 once", stop, m.ids["tx-1"], m.writes)
				}
			}
			// tx-9 ready again: read once more for nothing beside bd ready
			// (server mode), then forgotten.
			if err := os.WriteFile(filepath.Join(dir, "ready.json"), []byte(`[{"id":"tx-1.1","status":"open","parent":"tx-1"},`+
				`{"id":"tx-9","status":"open"},{"id":"tx-9.1","status":"open","parent":"tx-9"}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			for stop := range 2 {
				if _, err := c.Ready(ctx, "tx-1"); err != nil {
					t.Fatal(err)
				}
				cs := calls()
				slices.Sort(cs)
				want := []string{"ready 0"}
				if stop == 0 && mode == beads.ModeServer {
					want = []string{"list tx-9", "ready 0"}
				}
				if !slices.Equal(cs, want) {
					t.Errorf("after: stop %d: bd calls %q, want %q", stop, cs, want)
				}
				if len(m.ids["tx-1"]) != 0 || m.writes != 2 {
					t.Errorf("after: stop %d: remembered %q in %d writes, want none, forgotten once", stop, m.ids["tx-1"], m.writes)
				}
			}
			// A memory holding what bd would read as a flag, or that a
			// comma would split: not passed to bd.
			m.ids["tx-1"] = []string{"--all", "a,b", ""}
			if _, err := c.Ready(ctx, "tx-1"); err != nil {
				t.Fatal(err)
			}
			if cs := calls(); !slices.Equal(cs, []string{"ready 0"}) {
				t.Errorf("bad ids remembered: bd calls %q", cs)
			}
		})
	}
}
