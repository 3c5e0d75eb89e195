package state

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// bindingsDir holds one binding file (and one lock file) per session.
const bindingsDir = "bindings"

// Binding ties one agent session to the epic it is armed for (/run-tasks,
// runtasks arm) and the tasks it claimed; the stop hook drives an armed
// session without a static --epic.
type Binding struct {
	Session   string       `json:"session"`
	Epic      string       `json:"epic,omitempty"` // "" = not armed
	ArmedAt   time.Time    `json:"armed_at,omitzero"`
	Claims    []ClaimedRun `json:"claims,omitempty"` // oldest first
	UpdatedAt time.Time    `json:"updated_at,omitzero"`
}

func (b Binding) Empty() bool { return b.Epic == "" && len(b.Claims) == 0 }

// AddClaim records a claim, replacing an earlier claim of the same task.
func (b *Binding) AddClaim(c ClaimedRun) {
	if i := slices.IndexFunc(b.Claims, func(o ClaimedRun) bool { return o.Task == c.Task }); i >= 0 {
		b.Claims[i] = c
		return
	}
	b.Claims = append(b.Claims, c)
}

// BindingPath is session's binding file, always directly inside Dir/bindings.
func (s *Store) BindingPath(session string) (string, error) {
	if session == "" {
		return "", ErrNoSession
	}
	dir, err := s.sub(bindingsDir)
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(dir, SafeName(session, 24, "-")+"_"+hex.EncodeToString(sum[:])[:32]+stateExt), err
}

// Binding reads session's binding; a corrupt file is reported (Warn) and read as none.
func (s *Store) Binding(session string) (Binding, error) {
	path, err := s.BindingPath(session)
	if err != nil {
		return Binding{}, err
	}
	return s.readBinding(path, session, "ignored")
}

// readBinding reads session's binding at path; a corrupt file is reported
// (Warn, saying what becomes of it) and read as none.
func (s *Store) readBinding(path, session, fate string) (Binding, error) {
	b, err := readFile(path, "binding", Binding{Session: session}, func(b Binding) string { return fmt.Sprintf("session %q", b.Session) })
	if errors.Is(err, errCorrupt) {
		s.Warnf("%v; %s", err, fate)
		return Binding{Session: session}, nil
	}
	return b, err
}

// UpdateBinding is Update for session's binding; an empty binding is removed.
func (s *Store) UpdateBinding(session string, fn func(*Binding) error) (Binding, error) {
	path, err := s.BindingPath(session)
	if err != nil {
		return Binding{}, err
	}
	read := func() (Binding, error) {
		removeTemps(path)
		return s.readBinding(path, session, "replaced")
	}
	return rewrite(s, path, read, fn, func(b *Binding) error {
		b.Session = session
		if b.Empty() {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove binding: %w", err)
			}
			return nil
		}
		b.UpdatedAt = s.now().UTC().Round(0)
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
		}
		return writeFileAtomic(path, append(data, '\n'), true, false)
	})
}

// Bindings lists every binding, most recently updated first, skipping (Warn) bad files.
func (s *Store) Bindings() ([]Binding, error) {
	out, err := listFiles(s, bindingsDir, "binding", func(b Binding, name string) bool {
		p, err := s.BindingPath(b.Session)
		return err == nil && filepath.Base(p) == name
	})
	slices.SortStableFunc(out, func(a, b Binding) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), cmp.Compare(a.Session, b.Session))
	})
	return out, err
}

// ResultsFile is the run-folder file a claimed task's results go in.
const ResultsFile = "RESULTS.md"

// ResultsDigest is ClaimedRun.ResultsSHA256 of a RESULTS.md's content.
func ResultsDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// UntouchedResults returns the claims whose RESULTS.md is missing or still
// its template (same digest); claims without a digest are not judged.
func UntouchedResults(claims []ClaimedRun) []ClaimedRun {
	return slices.DeleteFunc(slices.Clone(claims), func(c ClaimedRun) bool {
		if c.ResultsSHA256 == "" || c.RunDir == "" {
			return true
		}
		data, err := agentfile.Read(filepath.Join(c.RunDir, ResultsFile), agentfile.MaxText)
		return err == nil && ResultsDigest(data) != c.ResultsSHA256
	})
}

// ResultsReason is the block reason naming untouched RESULTS.md files.
func ResultsReason(untouched []ClaimedRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "runtasks: the results of your claimed task%s are not written yet. Before you stop, fill in:\n",
		map[bool]string{true: "s"}[len(untouched) > 1])
	for _, c := range untouched {
		fmt.Fprintf(&b, "- %s (task %s)", filepath.Join(c.RunDir, ResultsFile), c.Task)
		if err := ResultsProblem(c); err != nil {
			fmt.Fprintf(&b, ": not read: %v; replace it with a regular file", err)
		}
		b.WriteString("\n")
	}
	b.WriteString("with what was done, how it was verified, and what is left.")
	return b.String()
}

// ResultsProblem is the *agentfile.Error of a claim's RESULTS.md that is
// not a regular file or is too large (it counts as not written); nil for a
// readable or a missing file.
func ResultsProblem(c ClaimedRun) error {
	if c.RunDir == "" {
		return nil
	}
	_, err := agentfile.Read(filepath.Join(c.RunDir, ResultsFile), agentfile.MaxText)
	if ae, ok := errors.AsType[*agentfile.Error](err); ok {
		return ae
	}
	return nil
}
