package beads

import "context"

// UseMemoryFiles sets whether bd's output goes through memory files (where
// the system has them) or pipes, and returns what restores it.
func UseMemoryFiles(on bool) (restore func()) {
	was := memoryFiles
	memoryFiles = on
	return func() { memoryFiles = was }
}

// LocalReady is the reading's own answer to bd ready --parent epic, and
// whether the store let it judge (Ready falls back to bd where it did not).
func (r *Reading) LocalReady(ctx context.Context, epic string) (ready []Issue, exact bool, err error) {
	if err := r.load(ctx); err != nil {
		return nil, false, err
	}
	ready, _ = r.ready(epic)
	return ready, r.exact, nil
}
