package state

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// linksDir holds, per epic, the ids of the issues whose links the epic's
// last ready query had to read (beads.Client.Ready reads them ahead the
// next time).
const linksDir = "ready-links"

// readyLinks is a links file: the epic (its name is a hash) and the ids.
type readyLinks struct {
	Epic string   `json:"epic"`
	IDs  []string `json:"ids"`
}

func (s *Store) linksPath(epic string) string {
	return filepath.Join(s.Dir, linksDir, stateName("ready", epic))
}

// ReadyLinks returns the ids remembered for epic (SetReadyLinks): none when
// nothing is, or the file cannot be read. Ids only, never what bd said of
// them: they are a hint of what to read, not an answer.
func (s *Store) ReadyLinks(epic string) []string {
	if s.Dir == "" {
		return nil
	}
	l, _ := readFile(s.linksPath(epic), "links", readyLinks{Epic: epic}, func(l readyLinks) string { return l.Epic })
	return l.IDs
}

// SetReadyLinks remembers ids for epic, replacing what was; none forgets.
// Writers do not wait for one another: each writes a file of its own and
// renames it into place, so the last one wins and a reader never sees a
// torn file.
func (s *Store) SetReadyLinks(epic string, ids []string) error {
	if s.Dir == "" {
		return errors.New("state directory not set")
	}
	path := s.linksPath(epic)
	if len(ids) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := s.mkdir(filepath.Dir(path)); err != nil {
		return err
	}
	data, err := json.Marshal(readyLinks{Epic: epic, IDs: ids})
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'), false, true)
}
