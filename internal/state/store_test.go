package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The store's tests start copies of the test binary as helper processes:
// TestStoreHelperProcess does the work when this variable names a mode.
const helperEnv = "RUNTASKS_STORE_HELPER"

type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(msg string) { w.mu.Lock(); w.msgs = append(w.msgs, msg); w.mu.Unlock() }
func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func newTestStore(t *testing.T) (*Store, *warnings) {
	t.Helper()
	w := &warnings{}
	return &Store{Dir: filepath.Join(t.TempDir(), "state"), Warn: w.add}, w
}

func incr(st *State) error { st.Cycles++; return nil }

func TestStoreUpdateGet(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	boom := errors.New("boom")
	tests := []struct {
		name    string
		session string
		epic    string
		fns     []func(*State) error
		wantErr error
		want    State // after the updates, read back by Get
	}{
		{name: "absent", session: "s1", epic: "bd-1",
			want: State{Session: "s1", Epic: "bd-1"}},
		{name: "one update", session: "s1", epic: "bd-1", fns: []func(*State) error{incr},
			want: State{Session: "s1", Epic: "bd-1", Cycles: 1, UpdatedAt: t0}},
		{name: "three updates", session: "s1", epic: "bd-1", fns: []func(*State) error{incr, incr, incr},
			want: State{Session: "s1", Epic: "bd-1", Cycles: 3, UpdatedAt: t0}},
		{name: "error writes nothing", session: "s1", epic: "bd-1",
			fns:     []func(*State) error{incr, func(st *State) error { st.Cycles = 99; return boom }},
			wantErr: boom, want: State{Session: "s1", Epic: "bd-1", Cycles: 1, UpdatedAt: t0}},
		{name: "ids cannot be rewritten", session: "s1", epic: "bd-1",
			fns:  []func(*State) error{func(st *State) error { st.Session, st.Epic = "other", "x"; st.Cycles = 2; return nil }},
			want: State{Session: "s1", Epic: "bd-1", Cycles: 2, UpdatedAt: t0}},
		{name: "fn's UpdatedAt kept", session: "s1", epic: "-",
			fns:  []func(*State) error{func(st *State) error { st.UpdatedAt = t0.Add(time.Hour); return nil }},
			want: State{Session: "s1", Epic: "-", UpdatedAt: t0.Add(time.Hour)}},
		{name: "empty epic is a key too", session: "s1", epic: "", fns: []func(*State) error{incr},
			want: State{Session: "s1", Cycles: 1, UpdatedAt: t0}},
		{name: "last record kept", session: "s1", epic: "bd-1",
			fns: []func(*State) error{func(st *State) error {
				st.Last = &Record{Time: t0, Session: "s1", Epic: "bd-1", Outcome: OutcomeContinue, Block: true, Why: "2 ready",
					Counts: &Counts{Ready: 2, InProgress: -1, Blocked: -1, Deferred: -1, Open: -1, Remaining: -1}}
				return nil
			}},
			want: State{Session: "s1", Epic: "bd-1", UpdatedAt: t0,
				Last: &Record{Time: t0, Session: "s1", Epic: "bd-1", Outcome: OutcomeContinue, Block: true, Why: "2 ready",
					Counts: &Counts{Ready: 2, InProgress: -1, Blocked: -1, Deferred: -1, Open: -1, Remaining: -1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, w := newTestStore(t)
			s.Now = func() time.Time { return t0 }
			var err error
			for _, fn := range tt.fns {
				if _, err = s.Update(tt.session, tt.epic, fn); err != nil {
					break
				}
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Update error = %v, want %v", err, tt.wantErr)
			}
			got, err := s.Get(tt.session, tt.epic)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Get = %+v\nwant  %+v", got, tt.want)
			}
			if len(w.all()) > 0 {
				t.Errorf("unexpected warnings: %q", w.all())
			}
		})
	}
}

func TestStoreUpdateReturnsWritten(t *testing.T) {
	s, _ := newTestStore(t)
	st, err := s.Update("s", "e", func(st *State) error { st.Cycles = 7; st.Fingerprint = "f"; return nil })
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get("s", "e")
	if !reflect.DeepEqual(st, got) {
		t.Errorf("Update returned %+v, file holds %+v", st, got)
	}
}

func TestStoreEmptySession(t *testing.T) {
	s, _ := newTestStore(t)
	called := false
	if _, err := s.Update("", "bd-1", func(*State) error { called = true; return nil }); !errors.Is(err, ErrNoSession) {
		t.Errorf("Update(\"\") error = %v, want ErrNoSession", err)
	}
	if called {
		t.Error("fn called for an empty session")
	}
	if _, err := s.Get("", "bd-1"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Get(\"\") error = %v, want ErrNoSession", err)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state dir created for an empty session: %v", err)
	}
}

func TestStoreNoDir(t *testing.T) {
	s := &Store{}
	if _, err := s.Update("s", "e", incr); err == nil {
		t.Error("Update with no Dir: no error")
	}
	if err := s.Append(Record{Session: "s"}); err == nil {
		t.Error("Append with no Dir: no error")
	}
}

// TestStoreHostileSessionIDs: whatever the ids, every file runtasks writes
// is directly inside <dir>/sessions (or the log), each pair of ids has its
// own file, and the ids come back intact.
func TestStoreHostileSessionIDs(t *testing.T) {
	long := strings.Repeat("../x/", 2048) // 10 KB
	ids := []struct{ session, epic string }{
		{"../../etc/passwd", "bd-1"},
		{"/abs/path", "bd-1"},
		{"a/b/c", "bd-1"},
		{"..", ".."},
		{".", "."},
		{"s\x00nul", "bd-1"},
		{"s", "bd-1\x00"},
		{"a\x00b", "c"},
		{"a", "b\x00c"},
		{long, "bd-1"},
		{"s1", long},
		{`C:\windows\system32`, `..\..`},
		{"-rf", "--epic"},
		{"*?[", "]"},
		{"line\nbreak", "\t"},
		{"ünïcödé😀", "bd-1"},
		{"null", "null"},
		{"s1", "bd-1"},
		{"S1", "bd-1"},
	}
	root := t.TempDir()
	s := &Store{Dir: filepath.Join(root, "project", ".runtasks")}
	sentinel := filepath.Join(root, "project", "keep")
	if err := os.Mkdir(filepath.Dir(sentinel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sentinel, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for i, id := range ids {
		st, err := s.Update(id.session, id.epic, func(st *State) error { st.Cycles = i + 1; return nil })
		if err != nil {
			t.Fatalf("Update(%.40q, %.40q): %v", id.session, id.epic, err)
		}
		if st.Session != id.session || st.Epic != id.epic {
			t.Errorf("ids changed: %.40q %.40q", st.Session, st.Epic)
		}
		if err := s.Append(Record{Session: id.session, Epic: id.epic, Outcome: OutcomeContinue}); err != nil {
			t.Fatal(err)
		}
		p, err := s.StatePath(id.session, id.epic)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(p) != filepath.Join(s.Dir, sessionsDir) {
			t.Errorf("StatePath(%.40q) = %s: outside the sessions dir", id.session, p)
		}
		if len(filepath.Base(p)) > 120 {
			t.Errorf("file name too long (%d): %s", len(filepath.Base(p)), filepath.Base(p))
		}
		if prev, dup := paths[p]; dup {
			t.Errorf("%.40q/%.40q shares a file with %s", id.session, id.epic, prev)
		}
		paths[p] = fmt.Sprintf("%q/%q", id.session, id.epic)
	}
	for i, id := range ids {
		got, err := s.Get(id.session, id.epic)
		if err != nil {
			t.Fatal(err)
		}
		if got.Cycles != i+1 {
			t.Errorf("Get(%.40q, %.40q).Cycles = %d, want %d", id.session, id.epic, got.Cycles, i+1)
		}
	}
	// Nothing outside the state dir but the sentinel, untouched.
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root || p == filepath.Dir(s.Dir) || p == sentinel {
			return nil
		}
		if p != s.Dir && !strings.HasPrefix(p, s.Dir+string(filepath.Separator)) {
			t.Errorf("written outside the state dir: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(sentinel); string(b) != "keep" {
		t.Errorf("sentinel changed: %q", b)
	}
	states, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != len(ids) {
		t.Errorf("List: %d states, want %d", len(states), len(ids))
	}
	recs, err := s.Records(RecordFilter{Session: long})
	if err != nil || len(recs) != 1 || recs[0].Session != long {
		t.Errorf("Records(long session) = %d records, %v", len(recs), err)
	}
	cleared, err := s.Clear("../../etc/passwd", "")
	n := len(cleared)
	if err != nil || n != 1 {
		t.Errorf("Clear(../../etc/passwd) = %d, %v; want 1", n, err)
	}
}

// TestStoreLockWait: a lock held too long is an error after LockWait, not
// a hang, and the lock works again once released.
func TestStoreLockWait(t *testing.T) {
	s, _ := newTestStore(t)
	s.LockWait = 100 * time.Millisecond
	if _, err := s.Update("s1", "e1", incr); err != nil {
		t.Fatal(err)
	}
	path, _ := s.StatePath("s1", "e1")
	unlock, err := s.lock(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	called := false
	_, err = s.Update("s1", "e1", func(*State) error { called = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "still held") {
		t.Errorf("Update with the lock held: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %s with LockWait 100ms", d)
	}
	if called {
		t.Error("fn called without the lock")
	}
	unlock()
	st, err := s.Update("s1", "e1", incr)
	if err != nil || st.Cycles != 2 {
		t.Errorf("after release: %d, %v; want 2", st.Cycles, err)
	}
}

func TestStoreConcurrentGoroutines(t *testing.T) {
	s, w := newTestStore(t)
	const workers, each = 64, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := s.Update("s1", "bd-1", incr); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := s.Get("s1", "bd-1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Cycles != workers*each {
		t.Errorf("Cycles = %d, want %d (lost updates)", st.Cycles, workers*each)
	}
	if len(w.all()) > 0 {
		t.Errorf("warnings: %q", w.all())
	}
}

// helperCmd re-executes the test binary as one store helper process.
func helperCmd(t *testing.T, mode, dir string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "RUNTASKS_STORE_DIR="+dir)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestStoreHelperProcess is not a test: it is the body of the helper
// processes the store tests start.
func TestStoreHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return // run as a normal test: nothing to do
	}
	s := &Store{Dir: os.Getenv("RUNTASKS_STORE_DIR"), Warn: func(msg string) { fmt.Fprintln(os.Stderr, "warn:", msg) }}
	switch mode {
	case "increment":
		n, _ := strconv.Atoi(os.Getenv("RUNTASKS_STORE_N"))
		why := strings.Repeat("w", 8<<10) // larger than PIPE_BUF: appends must still not interleave
		for i := range n {
			st, err := s.Update("s1", "bd-1", incr)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			if err := s.Append(Record{Session: "s1", Epic: "bd-1", Cycle: st.Cycles, Why: fmt.Sprintf("%d %d %s", os.Getpid(), i, why)}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
		os.Exit(0)
	case "loop":
		// Rewrites its state forever, until killed: a large one (through a
		// rename) or a small one whose size changes with each cycle (in
		// place on Linux).
		small := os.Getenv("RUNTASKS_STORE_SMALL") != ""
		for {
			if _, err := s.Update("s1", "bd-1", func(st *State) error {
				st.Cycles++
				st.Fingerprint = kill9Fingerprint(small, st.Cycles)
				st.Unchanged = st.Cycles // a torn write could not keep both equal
				return nil
			}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
	}
	os.Exit(3)
}

func TestStoreConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s, w := newTestStore(t)
	const procs, each = 16, 20
	var wg sync.WaitGroup
	for range procs {
		cmd := helperCmd(t, "increment", s.Dir, "RUNTASKS_STORE_N="+strconv.Itoa(each))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				t.Errorf("helper: %v", err)
			}
		}()
	}
	// The parent updates at the same time.
	for range each {
		if _, err := s.Update("s1", "bd-1", incr); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	st, err := s.Get("s1", "bd-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := procs*each + each; st.Cycles != want {
		t.Errorf("Cycles = %d, want %d (lost updates)", st.Cycles, want)
	}
	recs, err := s.Records(RecordFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != procs*each {
		t.Errorf("%d records, want %d", len(recs), procs*each)
	}
	cycles := map[int]bool{}
	for _, r := range recs {
		if len(r.Why) < 8<<10 {
			t.Fatalf("record cut: %d bytes", len(r.Why))
		}
		if cycles[r.Cycle] {
			t.Errorf("two updates saw cycle %d", r.Cycle)
		}
		cycles[r.Cycle] = true
	}
	if len(w.all()) > 0 {
		t.Errorf("warnings (interleaved lines?): %q", w.all())
	}
}

// TestStoreListWhileRewritten: status lists states without their locks
// while another process rewrites one, its size moving each time:
// every listing holds that state, whole, and nothing is called corrupt.
func TestStoreListWhileRewritten(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s, w := newTestStore(t)
	if _, err := s.Update("s1", "bd-1", func(st *State) error {
		st.Cycles, st.Unchanged, st.Fingerprint = 1, 1, kill9Fingerprint(true, 1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cmd := helperCmd(t, "loop", s.Dir, "RUNTASKS_STORE_SMALL=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	seen := map[int]bool{}
	for i := 0; i < 3000 && len(seen) < 200; i++ {
		states, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(states) != 1 {
			t.Fatalf("listing %d: %d states, want 1 (warnings %q)", i, len(states), w.all())
		}
		st := states[0]
		if st.Unchanged != st.Cycles || st.Fingerprint != kill9Fingerprint(true, st.Cycles) {
			t.Fatalf("listing %d: torn state: cycles %d, unchanged %d, fingerprint %d bytes", i, st.Cycles, st.Unchanged, len(st.Fingerprint))
		}
		seen[st.Cycles] = true
	}
	if len(seen) < 10 {
		t.Errorf("the listings saw %d different states: the writer did not run alongside", len(seen))
	}
	if len(w.all()) > 0 {
		t.Errorf("warnings: %q", w.all())
	}
}

// kill9Fingerprint is the fingerprint the kill -9 helper writes at cycle
// c: 1 MB, or (small) 64 to 1,663 bytes, a size that moves with c so that
// a rewrite both grows and shrinks the state.
func kill9Fingerprint(small bool, c int) string {
	if !small {
		return strings.Repeat("f", 1<<20)
	}
	return strings.Repeat("f", 64+c*389%1600)
}

// TestStoreKill9 kills a process in the middle of rewriting its state, over
// and over: the state file always holds a whole state (old or new), no temp
// file is read as a state, and the lock is free afterwards, for a large
// state and a small one.
func TestStoreKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, small := range []bool{false, true} {
		name := "large"
		if small {
			name = "small"
		}
		t.Run(name, func(t *testing.T) { testStoreKill9(t, small) })
	}
}

func testStoreKill9(t *testing.T, small bool) {
	s, w := newTestStore(t)
	path, _ := s.StatePath("s1", "bd-1")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	last := 0
	for round := range 8 {
		var env []string
		if small {
			env = append(env, "RUNTASKS_STORE_SMALL=1")
		}
		cmd := helperCmd(t, "loop", s.Dir, env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it write a few times, then kill it at a random moment.
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := s.Get("s1", "bd-1")
			if err != nil {
				t.Fatal(err)
			}
			if st.Cycles >= last+3 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: helper made no progress (cycles %d)", round, st.Cycles)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.Intn(20000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var st State
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatalf("round %d: state file is not valid JSON after kill -9: %v", round, err)
		}
		if st.Cycles < last || st.Unchanged != st.Cycles || st.Fingerprint != kill9Fingerprint(small, st.Cycles) {
			t.Fatalf("round %d: torn state: cycles %d (before %d), unchanged %d, fingerprint %d bytes",
				round, st.Cycles, last, st.Unchanged, len(st.Fingerprint))
		}
		last = st.Cycles
		states, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(states) != 1 {
			t.Fatalf("round %d: List = %d states, want 1 (temp file read as a state?)", round, len(states))
		}
	}
	// The lock died with the process: an update goes through at once.
	s.LockWait = 2 * time.Second
	st, err := s.Update("s1", "bd-1", incr)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cycles != last+1 {
		t.Errorf("Cycles = %d, want %d", st.Cycles, last+1)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), tmpInfix) {
			t.Errorf("temp file left after an update: %s", e.Name())
		}
	}
	if len(w.all()) > 0 {
		t.Errorf("warnings: %q", w.all())
	}
}

func TestStoreCorruptState(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0).UTC()
	tests := []struct {
		name    string
		content string
	}{
		{"bad json", "{not json"},
		{"truncated", `{"session":"s1","epic":"bd-1","cycles":`},
		{"empty file", ""},
		{"wrong type", `{"session":"s1","epic":"bd-1","cycles":"three"}`},
		{"another session's state", `{"session":"s2","epic":"bd-1","cycles":5}`},
		{"binary", "\x00\xff\xfe"},
	}
	for _, tt := range tests {
		for _, op := range []string{"Get", "Update"} {
			t.Run(tt.name+"/"+op, func(t *testing.T) {
				s, w := newTestStore(t)
				s.Now = func() time.Time { return t0 }
				path, _ := s.StatePath("s1", "bd-1")
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
				var st State
				var err error
				if op == "Get" {
					st, err = s.Get("s1", "bd-1")
				} else {
					st, err = s.Update("s1", "bd-1", incr)
				}
				if err != nil {
					t.Fatalf("%s on a corrupt file: %v", op, err)
				}
				want := State{Session: "s1", Epic: "bd-1"}
				if op == "Update" {
					want.Cycles, want.UpdatedAt = 1, t0
				}
				if !reflect.DeepEqual(st, want) {
					t.Errorf("%s = %+v, want fresh %+v", op, st, want)
				}
				msgs := w.all()
				if len(msgs) != 1 || !strings.Contains(msgs[0], path) || !strings.Contains(msgs[0], "corrupt") {
					t.Errorf("warnings = %q, want one naming %s", msgs, path)
				}
				aside := fmt.Sprintf("%s.corrupt-%d", path, t0.Unix())
				if b, err := os.ReadFile(aside); err != nil || string(b) != tt.content {
					t.Errorf("corrupt file not kept aside as %s: %q, %v", aside, b, err)
				}
				// A second corruption in the same second keeps both.
				os.WriteFile(path, []byte("again"), 0o644)
				if _, err := s.Update("s1", "bd-1", incr); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(aside); string(b) != tt.content {
					t.Errorf("first aside copy overwritten: %q", b)
				}
				matches, _ := filepath.Glob(path + ".corrupt-*")
				if len(matches) != 2 {
					t.Errorf("aside copies = %q, want 2", matches)
				}
				if got, _ := s.Get("s1", "bd-1"); got.Cycles != 1 {
					t.Errorf("after recovery Cycles = %d, want 1", got.Cycles)
				}
			})
		}
	}
}

func TestStoreListSkipsCorrupt(t *testing.T) {
	s, w := newTestStore(t)
	for _, id := range []string{"a", "b"} {
		if _, err := s.Update(id, "e", incr); err != nil {
			t.Fatal(err)
		}
	}
	path, _ := s.StatePath("b", "e")
	os.WriteFile(path, []byte("garbage"), 0o644)
	states, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].Session != "a" {
		t.Errorf("List = %+v, want only a", states)
	}
	if msgs := w.all(); len(msgs) != 1 || !strings.Contains(msgs[0], path) {
		t.Errorf("warnings = %q", msgs)
	}
	if b, _ := os.ReadFile(path); string(b) != "garbage" {
		t.Error("List changed a corrupt file")
	}
}

func TestStoreListOrder(t *testing.T) {
	s, _ := newTestStore(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"old", "new", "mid"} {
		at := base.Add(time.Duration([]int{1, 3, 2}[i]) * time.Hour)
		if _, err := s.Update(id, "e", func(st *State) error { st.UpdatedAt = at; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	states, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range states {
		got = append(got, st.Session)
	}
	if want := []string{"new", "mid", "old"}; !reflect.DeepEqual(got, want) {
		t.Errorf("List order = %v, want %v", got, want)
	}
	empty := &Store{Dir: filepath.Join(t.TempDir(), "none")}
	if states, err := empty.List(); err != nil || len(states) != 0 {
		t.Errorf("List of a missing dir = %v, %v", states, err)
	}
}

func TestStoreUnwritableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{"under a regular file": filepath.Join(file, "state")}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(t.TempDir(), "ro")
		os.Mkdir(ro, 0o555)
		dirs["read-only parent"] = filepath.Join(ro, "state")
		ro2 := filepath.Join(t.TempDir(), "ro2")
		os.MkdirAll(filepath.Join(ro2, sessionsDir), 0o755)
		os.Chmod(filepath.Join(ro2, sessionsDir), 0o555)
		os.Chmod(ro2, 0o555)
		dirs["read-only state dir"] = ro2
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			s := &Store{Dir: dir, LockWait: time.Second}
			called := false
			if _, err := s.Update("s1", "bd-1", func(*State) error { called = true; return nil }); err == nil {
				t.Error("Update: no error")
			}
			if called {
				t.Error("fn called although nothing can be written")
			}
			if err := s.Append(Record{Session: "s1"}); err == nil {
				t.Error("Append: no error")
			}
			if _, err := s.Clear("", ""); err != nil && name == "read-only state dir" {
				t.Logf("Reset: %v", err) // nothing to reset: no states
			}
		})
	}
}

func TestStoreReset(t *testing.T) {
	s, _ := newTestStore(t)
	pairs := [][2]string{{"s1", "e1"}, {"s1", "e2"}, {"s2", "e1"}, {"s3", "e3"}}
	setup := func() {
		for _, p := range pairs {
			if _, err := s.Update(p[0], p[1], incr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Append(Record{Session: "s1", Epic: "e1"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		session, epic string
		want          int
		left          []string
	}{
		{"s1", "e1", 1, []string{"s1/e2", "s2/e1", "s3/e3"}},
		{"s1", "", 2, []string{"s2/e1", "s3/e3"}},
		{"", "e1", 2, []string{"s1/e2", "s3/e3"}},
		{"", "", 4, nil},
		{"nobody", "", 0, []string{"s1/e1", "s1/e2", "s2/e1", "s3/e3"}},
		{"s1", "e3", 0, []string{"s1/e1", "s1/e2", "s2/e1", "s3/e3"}},
	}
	for _, tt := range tests {
		t.Run(tt.session+"/"+tt.epic, func(t *testing.T) {
			s.Clear("", "")
			setup()
			cleared, err := s.Clear(tt.session, tt.epic)
			n := len(cleared)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("Clear = %d, want %d", n, tt.want)
			}
			states, _ := s.List()
			var left []string
			for _, st := range states {
				left = append(left, st.Session+"/"+st.Epic)
			}
			sortStrings(left)
			if !reflect.DeepEqual(left, tt.left) {
				t.Errorf("left %v, want %v", left, tt.left)
			}
		})
	}
	// Counters start again; the log is kept.
	s.Clear("", "")
	st, err := s.Update("s1", "e1", incr)
	if err != nil || st.Cycles != 1 {
		t.Errorf("after reset: Cycles = %d, %v; want 1", st.Cycles, err)
	}
	if recs, _ := s.Records(RecordFilter{}); len(recs) != 1 {
		t.Errorf("log has %d records after reset, want 1", len(recs))
	}
	cleared, err := s.Clear("s1", "e1")
	if err != nil || len(cleared) != 1 || cleared[0].Cycles != 1 {
		t.Errorf("Clear = %+v, %v; want the state with 1 cycle", cleared, err)
	}
	entries, _ := os.ReadDir(filepath.Join(s.Dir, sessionsDir))
	if len(entries) != 0 {
		t.Errorf("files left after reset of all: %d", len(entries))
	}
}

// TestStoreResetDuringUpdates: resets that remove lock files while updates
// wait on them never let two updates in at once.
func TestStoreResetDuringUpdates(t *testing.T) {
	s, _ := newTestStore(t)
	var (
		wg     sync.WaitGroup
		inside sync.Mutex // TryLock fails if two updates run fn together
		errs   = make(chan error, 1000)
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				_, err := s.Update("s1", "e1", func(st *State) error {
					if !inside.TryLock() {
						return errors.New("two updates inside the lock")
					}
					time.Sleep(50 * time.Microsecond)
					inside.Unlock()
					st.Cycles++
					return nil
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			if _, err := s.Clear("s1", ""); err != nil {
				errs <- err
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// writeLog writes raw lines to a store's decision log.
func writeLog(t testing.TB, s *Store, lines []string) {
	t.Helper()
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.LogPath(), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func recLine(session, epic string, cycle int) string {
	b, _ := json.Marshal(Record{Time: time.Unix(int64(1_800_000_000+cycle), 0).UTC(), Session: session, Epic: epic,
		Outcome: OutcomeContinue, Block: true, Cycle: cycle, Max: 20, Why: "work remains"})
	return string(b) + "\n"
}

func cyclesOf(recs []Record) []int {
	out := []int{}
	for _, r := range recs {
		out = append(out, r.Cycle)
	}
	return out
}

func TestRecordsFilter(t *testing.T) {
	lines := []string{
		recLine("s1", "e1", 1),
		recLine("s2", "e1", 2),
		"{corrupt\n",
		recLine("s1", "e2", 3),
		"\n",
		recLine("s1", "e1", 4),
		recLine("s2", "e2", 5),
	}
	tests := []struct {
		name   string
		filter RecordFilter
		want   []int
		warn   bool // the corrupt line is read
	}{
		{"all", RecordFilter{}, []int{1, 2, 3, 4, 5}, true},
		{"session", RecordFilter{Session: "s1"}, []int{1, 3, 4}, true},
		{"epic", RecordFilter{Epic: "e1"}, []int{1, 2, 4}, true},
		{"both", RecordFilter{Session: "s1", Epic: "e1"}, []int{1, 4}, true},
		{"last 2", RecordFilter{Limit: 2}, []int{4, 5}, false},
		{"last 2 of s1", RecordFilter{Session: "s1", Limit: 2}, []int{3, 4}, false},
		{"last 3 of s1", RecordFilter{Session: "s1", Limit: 3}, []int{1, 3, 4}, true},
		{"limit above count", RecordFilter{Limit: 100}, []int{1, 2, 3, 4, 5}, true},
		{"no match", RecordFilter{Session: "nobody"}, []int{}, true},
		{"no match limited", RecordFilter{Session: "nobody", Limit: 3}, []int{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, w := newTestStore(t)
			writeLog(t, s, lines)
			recs, err := s.Records(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := cyclesOf(recs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cycles = %v, want %v", got, tt.want)
			}
			msgs := w.all()
			if tt.warn && (len(msgs) != 1 || !strings.Contains(msgs[0], "1 corrupt line") || !strings.Contains(msgs[0], s.LogPath())) {
				t.Errorf("warnings = %q, want one about 1 corrupt line", msgs)
			}
			if !tt.warn && len(msgs) != 0 {
				t.Errorf("warnings = %q, want none (the corrupt line is not among the last read)", msgs)
			}
		})
	}
}

func TestRecordsMissingLog(t *testing.T) {
	s, _ := newTestStore(t)
	for _, f := range []RecordFilter{{}, {Limit: 10}} {
		if recs, err := s.Records(f); err != nil || len(recs) != 0 {
			t.Errorf("Records(%+v) of no log = %v, %v", f, recs, err)
		}
	}
}

// TestRecordsBackwardMatchesForward compares the reverse reader with the
// forward one on logs with lines of every size around the block size, a
// torn last line and corrupt lines.
func TestRecordsBackwardMatchesForward(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 20 {
		var lines []string
		n := 50 + rng.Intn(300)
		for i := range n {
			switch rng.Intn(20) {
			case 0:
				lines = append(lines, "not json\n")
			case 1:
				// Lines longer than a 64 KiB block.
				b, _ := json.Marshal(Record{Session: "s" + strconv.Itoa(rng.Intn(3)), Cycle: i, Why: strings.Repeat("x", 60<<10+rng.Intn(80<<10))})
				lines = append(lines, string(b)+"\n")
			default:
				lines = append(lines, recLine("s"+strconv.Itoa(rng.Intn(3)), "e"+strconv.Itoa(rng.Intn(2)), i))
			}
		}
		if trial%3 == 0 {
			lines = append(lines, `{"session":"s0","cyc`) // torn last line
		}
		s, _ := newTestStore(t)
		writeLog(t, s, lines)
		for _, f := range []RecordFilter{{}, {Session: "s1"}, {Epic: "e0"}, {Session: "s2", Epic: "e1"}} {
			all, err := s.Records(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{1, 2, 7, 10, 100, 1000} {
				f.Limit = limit
				got, err := s.Records(f)
				if err != nil {
					t.Fatal(err)
				}
				want := all[max(len(all)-limit, 0):]
				if !reflect.DeepEqual(cyclesOf(got), cyclesOf(want)) {
					t.Fatalf("trial %d filter %+v: backward %v, forward %v", trial, f, cyclesOf(got), cyclesOf(want))
				}
			}
		}
	}
}

// TestRecordsLimitReadsFromTheEnd: the last N of 10,000 records are found
// without reading the whole log (a corrupt line at its start goes unseen).
func TestRecordsLimitReadsFromTheEnd(t *testing.T) {
	s, w := newTestStore(t)
	lines := []string{"corrupt first line\n"}
	for i := 1; i <= 10_000; i++ {
		lines = append(lines, recLine("s"+strconv.Itoa(i%4), "e1", i))
	}
	writeLog(t, s, lines)
	recs, err := s.Records(RecordFilter{Session: "s1", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{}
	for i := 9_961; i <= 10_000; i++ {
		if i%4 == 1 {
			want = append(want, i)
		}
	}
	if got := cyclesOf(recs); !reflect.DeepEqual(got, want) {
		t.Errorf("last 10 of s1 = %v, want %v", got, want)
	}
	if len(w.all()) != 0 {
		t.Errorf("the whole log was read: %q", w.all())
	}
	all, err := s.Records(RecordFilter{})
	if err != nil || len(all) != 10_000 {
		t.Errorf("all records: %d, %v", len(all), err)
	}
	if len(w.all()) != 1 {
		t.Errorf("full read: warnings %q, want 1", w.all())
	}
}

func TestRecordsAppendConcurrent(t *testing.T) {
	s, w := newTestStore(t)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if err := s.Append(Record{Session: "s" + strconv.Itoa(g), Cycle: i, Why: strings.Repeat("y", 10<<10)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	recs, err := s.Records(RecordFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 32*50 || len(w.all()) != 0 {
		t.Errorf("%d records, warnings %q; want %d and none", len(recs), w.all(), 32*50)
	}
	// Each session's records are in its own order.
	next := map[string]int{}
	for _, r := range recs {
		if r.Cycle != next[r.Session] {
			t.Fatalf("session %s: cycle %d after %d", r.Session, r.Cycle, next[r.Session]-1)
		}
		next[r.Session]++
	}
}

func BenchmarkRecordsLast10(b *testing.B) {
	s := &Store{Dir: b.TempDir()}
	var lines []string
	for i := range 10_000 {
		lines = append(lines, recLine("s"+strconv.Itoa(i%8), "e1", i))
	}
	writeLog(b, s, lines)
	for b.Loop() {
		if recs, err := s.Records(RecordFilter{Session: "s3", Limit: 10}); err != nil || len(recs) != 10 {
			b.Fatal(len(recs), err)
		}
	}
}

func BenchmarkStoreUpdate(b *testing.B) {
	s := &Store{Dir: b.TempDir()}
	for b.Loop() {
		if _, err := s.Update("s1", "e1", incr); err != nil {
			b.Fatal(err)
		}
	}
}
