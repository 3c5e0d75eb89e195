package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// manifest records what install wrote for one root, in ManifestDir.
type manifest struct {
	Version int    `json:"version"`
	Root    string `json:"root"`
	// Settings: settings file path (as the agent reads it) → record.
	Settings map[string]*settingsRecord `json:"settings,omitempty"`
	// Files are shared files install wrote, their users and digest.
	Files map[string]*sharedFile `json:"files,omitempty"`
	// Dirs are directories install created, with the agents using them.
	Dirs map[string][]string `json:"dirs,omitempty"`

	path string
	lock *os.File
}

type sharedFile struct {
	SHA256  string   `json:"sha256"`
	Holders []string `json:"holders"`
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// openManifest locks and reads the root's record; m.lock.Close must be
// called (a nil *os.File, when not writing, closes as a no-op).
func openManifest(dir, root string, write bool) (*manifest, error) {
	m := &manifest{Version: 1, path: filepath.Join(dir, digest([]byte(root))[:16]+".json"),
		Settings: map[string]*settingsRecord{}, Files: map[string]*sharedFile{}, Dirs: map[string][]string{}}
	if write {
		err := os.MkdirAll(dir, 0o700)
		if err == nil {
			m.lock, err = os.OpenFile(m.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
		}
		if err == nil {
			err = unix.Flock(int(m.lock.Fd()), unix.LOCK_EX)
		}
		if err != nil {
			m.lock.Close()
			return nil, fmt.Errorf("install record: %w", err)
		}
	}
	fc, err := readFile(m.path)
	if err == nil && fc.before != nil {
		err = json.Unmarshal(fc.before, m)
	}
	if err != nil {
		m.lock.Close()
		return nil, fmt.Errorf("install record %s: %w (move it away to start afresh)", m.path, err)
	}
	m.Root = root
	return m, nil
}

// save writes the record atomically, or removes it when it is empty.
func (m *manifest) save() error {
	if len(m.Settings) == 0 && len(m.Files) == 0 && len(m.Dirs) == 0 {
		if err := os.Remove(m.path); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(m.path, append(b, '\n'), 0o600)
}

func addHolder(list []string, h string) []string {
	if slices.Contains(list, h) {
		return list
	}
	return append(list, h)
}

func dropHolder(list []string, h string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == h })
}
