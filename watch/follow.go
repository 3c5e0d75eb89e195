package watch

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Debounce is how long Follow waits after a change for the next one
// before it reports: a stop writes several files.
const Debounce = 150 * time.Millisecond

// Follow calls changed whenever the state directory (dir, its sessions and
// bindings folders, the decision log) changes, at most once per Debounce,
// until ctx ends. Folders that do not exist yet are watched once they
// appear.
func Follow(ctx context.Context, dir string, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	watched := map[string]bool{}
	add := func() {
		for _, d := range []string{filepath.Dir(dir), dir, filepath.Join(dir, "sessions"), filepath.Join(dir, "bindings")} {
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
