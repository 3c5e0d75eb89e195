package beadstest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads"
)

// Store is a throwaway beads store made by the real bd in a temporary git
// repository, with HOME pointed at a temporary directory.
type Store struct {
	t    testing.TB
	Root string   // the git repository holding .beads
	Bin  string   // the real bd
	Env  []string // for every bd and the code under test
}

// RealBD returns the real bd on PATH (`make bd`), failing the test when it
// is missing: integration tests never skip.
func RealBD(t testing.TB) string { t.Helper(); return onPath(t, "bd", "the real bd") }

// RealDolt returns the dolt CLI on PATH (`make dolt`), likewise.
func RealDolt(t testing.TB) string { t.Helper(); return onPath(t, "dolt", "the dolt CLI") }

func onPath(t testing.TB, name, what string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not on PATH (run `make %s`, or test with `make test`): %v", what, name, err)
	}
	return bin
}

// initFlags are bd init's flags for a throwaway store.
var initFlags = []string{"--non-interactive", "--stealth", "--skip-agents", "--skip-hooks", "-q"}

// NewStore initialises a stealth store with the given prefix.
func NewStore(t testing.TB, prefix string) *Store {
	t.Helper()
	s := newStore(t)
	s.BD(append([]string{"init", "--prefix", prefix}, initFlags...)...)
	return s
}

// newStore makes a store's git repository and HOME, env added, for bd init.
func newStore(t testing.TB, env ...string) *Store {
	t.Helper()
	bin, dir := RealBD(t), t.TempDir()
	home, root := filepath.Join(dir, "home"), filepath.Join(dir, "repo")
	for _, d := range []string{home, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The user's store and repository (BEADS_DIR, a git hook's GIT_DIR) are never the test's.
	base := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GIT_") || slices.ContainsFunc([]string{"BEADS_DIR=", "BEADS_DB=", "BD_DB="}, func(p string) bool { return strings.HasPrefix(kv, p) })
	})
	env = append(append(base,
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "CLAUDE_PROJECT_DIR=", "BD_DISABLE_METRICS=1", "BD_NON_INTERACTIVE=1", "NO_COLOR=1",
		"BEADS_ACTOR=tester", "GIT_AUTHOR_NAME=tester", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=tester", "GIT_COMMITTER_EMAIL=t@example.com",
	), env...)
	s := &Store{t: t, Root: root, Bin: bin, Env: env}
	s.exec("git", "init", "-q")
	return s
}

// BD runs the real bd in the store and returns its stdout; a failure fails
// the test.
func (s *Store) BD(args ...string) string {
	s.t.Helper()
	return s.exec(s.Bin, args...)
}

func (s *Store) exec(bin string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = s.Root, s.Env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// Create makes an issue with bd create's extra flags and returns its id.
func (s *Store) Create(title string, extra ...string) string {
	s.t.Helper()
	out := s.BD(append([]string{"create", title, "--json"}, extra...)...)
	var v beads.Issue
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
		s.t.Fatalf("bd create %q: no id in %q: %v", title, out, err)
	}
	return v.ID
}

// Close closes issues with a reason.
func (s *Store) Close(ids ...string) {
	s.t.Helper()
	s.BD(append(append([]string{"close"}, ids...), "--reason", "done", "--json")...)
}

// Status sets an issue's stored status.
func (s *Store) Status(id, status string) {
	s.t.Helper()
	s.BD("update", id, "--status", status, "--json")
}

// Block records that id depends on (is blocked by) blocker.
func (s *Store) Block(id, blocker string) {
	s.t.Helper()
	s.BD("dep", "add", id, blocker, "--json")
}
