package headless

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/google/renameio/v2"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
)

// RunFile is the name of a run's record in its folder.
const RunFile = "run.json"

// save writes run.json atomically (a temp file renamed over it).
func (r *runner) save() {
	r.state.UpdatedAt = r.o.Now()
	b, err := json.MarshalIndent(r.state, "", "  ")
	if err == nil {
		err = renameio.WriteFile(filepath.Join(r.dir, RunFile), append(b, '\n'), 0o600, renameio.WithStaticPermissions(0o600))
	}
	if err != nil {
		r.log.Warn("run record", "err", fmt.Errorf("run record: %w", err))
	}
}

// ReadRun reads a run's record from its folder.
func ReadRun(dir string) (RunState, error) {
	var st RunState
	b, err := agentfile.Read(filepath.Join(dir, RunFile), agentfile.MaxText)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	return st, err
}

// RunsDir is the folder holding every run's folder.
func RunsDir(cfg *config.Config) string {
	if filepath.IsAbs(cfg.Run.Dir) {
		return cfg.Run.Dir
	}
	return filepath.Join(cfg.StateDir(), cfg.Run.Dir)
}

// StatusDead is ListRuns' status of a running run whose process is gone.
const StatusDead = "dead"

// ListRuns reads every run's record under dir, newest first, returning the unreadable in skipped.
func ListRuns(dir string) (runs []RunState, skipped []error, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		st, err := ReadRun(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder of something else, or a run starting
		}
		if err != nil {
			skipped = append(skipped, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name(), RunFile), err))
			continue
		}
		if st.Status == "running" && !processAlive(st.PID) {
			st.Status = StatusDead
		}
		runs = append(runs, st)
	}
	slices.SortStableFunc(runs, func(a, b RunState) int { return b.StartedAt.Compare(a.StartedAt) })
	return runs, skipped, nil
}

// processAlive reports whether pid names a live process of this machine.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
