package beads

import "context"

// LocalReady is the reading's own answer to bd ready --parent epic, and
// whether the store let it judge (Ready falls back to bd where it did not).
func (r *Reading) LocalReady(ctx context.Context, epic string) (ready []Issue, exact bool, err error) {
	if err := r.load(ctx); err != nil {
		return nil, false, err
	}
	ready, _ = r.ready(epic)
	return ready, r.exact, nil
}
