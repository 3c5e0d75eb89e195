package headless

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// RunFile is the name of a run's record in its folder.
const RunFile = "run.json"

// save writes run.json atomically (write, then rename).
func (r *runner) save() {
	r.state.UpdatedAt = r.o.Now()
	if err := writeJSON(filepath.Join(r.dir, RunFile), r.state); err != nil {
		r.log.Warn("run record", "err", err)
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("run record: %w", err)
	}
	return nil
}

// ReadRun reads a run's record from its folder.
func ReadRun(dir string) (RunState, error) {
	var st RunState
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	return st, nil
}
