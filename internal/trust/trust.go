// Package trust records which projects' project.yaml the user trusts, by
// root and sha256 (as direnv does): any change needs trusting again. One
// JSON file per root, written atomically, so writers never collide.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// State is what the store says of a project's project.yaml.
type State int

const (
	// Untrusted: the project was never trusted (or was untrusted since).
	Untrusted State = iota
	// Changed: the project was trusted, but its project.yaml changed since.
	Changed
	// Trusted: trusted, and the file is the one that was trusted.
	Trusted
)

var stateNames = [...]string{Untrusted: "untrusted", Changed: "changed since trusted", Trusted: "trusted"}

func (s State) String() string { return stateNames[s] }

// maxRecord bounds a record file's size: a record is a few hundred bytes.
const maxRecord = 64 << 10

type Record struct {
	Root   string    `json:"root"`   // absolute and cleaned
	SHA256 string    `json:"sha256"` // of the trusted project.yaml
	File   string    `json:"file,omitempty"`
	At     time.Time `json:"trusted_at"`
}

// Store is the trust records under Dir (the runtasks configuration
// directory; records go in its trusted/ subdirectory).
type Store struct {
	Dir string
}

// DefaultDir is the runtasks configuration directory from an environment:
// $XDG_CONFIG_HOME/runtasks when XDG_CONFIG_HOME is an absolute path, else
// $HOME/.config/runtasks. It fails when neither is set.
func DefaultDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "runtasks"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "runtasks"), nil
	}
	return "", errors.New("trust: neither XDG_CONFIG_HOME nor HOME is set")
}

func Sum(content []byte) string {
	s := sha256.Sum256(content)
	return hex.EncodeToString(s[:])
}

// path is root made absolute (and clean), and the file of its record.
func (s *Store) path(root string) (abs, file string, err error) {
	if abs, err = filepath.Abs(root); err != nil {
		return "", "", fmt.Errorf("trust: %w", err)
	}
	h := sha256.Sum256([]byte(abs))
	return abs, filepath.Join(s.Dir, "trusted", hex.EncodeToString(h[:16])+".json"), nil
}

// Get reads the record of root; ok is false when there is none.
func (s *Store) Get(root string) (rec Record, ok bool, err error) {
	root, p, err := s.path(root)
	if err != nil {
		return Record{}, false, err
	}
	data, err := agentfile.Read(p, maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("trust: record %w", err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return Record{}, false, fmt.Errorf("trust: %s: %w", p, err)
	}
	if rec.Root != root {
		// Another root's record under this name: not this project's.
		return Record{}, false, nil
	}
	return rec, true, nil
}

// Check says whether the project at root with this project.yaml content
// is trusted.
func (s *Store) Check(root string, content []byte) (State, error) {
	rec, ok, err := s.Get(root)
	switch {
	case err != nil:
		return Untrusted, err
	case !ok:
		return Untrusted, nil
	case rec.SHA256 != Sum(content):
		return Changed, nil
	}
	return Trusted, nil
}

// CheckFile is Check for the project.yaml at file, read as an agent's file.
func (s *Store) CheckFile(root, file string) (State, error) {
	data, err := agentfile.Read(file, agentfile.MaxText)
	if err != nil {
		return Untrusted, err
	}
	return s.Check(root, data)
}

// Trust records root as trusted with this project.yaml content (file is
// its path, kept for people reading the record).
func (s *Store) Trust(root, file string, content []byte, now time.Time) (Record, error) {
	root, p, err := s.path(root)
	if err != nil {
		return Record{}, err
	}
	rec := Record{Root: root, SHA256: Sum(content), File: file, At: now.UTC().Truncate(time.Second)}
	data, _ := json.MarshalIndent(rec, "", "  ") // strings and a time of now: no error
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return Record{}, fmt.Errorf("trust: %w", err)
	}
	// Synced, whole or not at all: a temp file renamed over the record.
	if err := renameio.WriteFile(p, append(data, '\n'), 0o600, renameio.WithStaticPermissions(0o600)); err != nil {
		return Record{}, fmt.Errorf("trust: %w", err)
	}
	return rec, nil
}

// Untrust removes root's record; removed is false when there was none.
func (s *Store) Untrust(root string) (removed bool, err error) {
	root, p, err := s.path(root)
	if err != nil {
		return false, err
	}
	if _, ok, err := s.Get(root); err == nil && !ok {
		return false, nil
	}
	err = os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("trust: %w", err)
	}
	return true, nil
}
