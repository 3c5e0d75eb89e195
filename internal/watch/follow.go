package watch

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Debounce is how long Follow waits after a change before it reports: a
// stop writes several files.
const Debounce = 150 * time.Millisecond

// Follow calls changed whenever the state directory or runtasks run's
// folders (runsDirs, and their run folders) change, at most once per
// Debounce, until ctx ends; folders are watched once they appear.
func Follow(ctx context.Context, dir string, changed func(), runsDirs ...string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	watched := map[string]bool{}
	add := func() {
		dirs := []string{filepath.Dir(dir), dir, filepath.Join(dir, "sessions"), filepath.Join(dir, "bindings")}
		for _, rd := range runsDirs { // "" reads and stats as nothing
			dirs = append(dirs, rd)
			entries, _ := os.ReadDir(rd)
			for _, e := range entries {
				dirs = append(dirs, filepath.Join(rd, e.Name()))
			}
		}
		for _, d := range dirs {
			if watched[d] {
				continue
			}
			if fi, err := os.Stat(d); err == nil && fi.IsDir() && w.Add(d) == nil {
				watched[d] = true
			}
		}
	}
	add()
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Dir(ev.Name) == filepath.Dir(dir) && ev.Name != dir {
				continue // the project root: only the state dir's appearance matters
			}
			add()
			if timer == nil {
				timer = time.After(Debounce)
			}
		case <-w.Errors:
		case <-timer:
			timer = nil
			changed()
		}
	}
}
