package claim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/state"
)

// Shower reads one issue; *beads.Client implements it.
type Shower interface {
	// Show reads one issue; an unknown id is a beads.KindNotFound error.
	Show(ctx context.Context, id string) (beads.Issue, error)
}

// Arm binds session to epic in store, so that its Stop hook drives that
// epic, after asking beads: an id beads does not know (ErrUnknown) or a
// closed issue (ErrClosed) arms nothing. Arming again for the same epic
// keeps the first ArmedAt. It returns the epic as beads has it and the
// binding as written. The prompt hook (/run-tasks <id>) and runtasks arm
// both arm through it.
func Arm(ctx context.Context, t Shower, store *state.Store, session, epic string, now time.Time) (beads.Issue, state.Binding, error) {
	is, err := t.Show(ctx, epic)
	if beads.IsKind(err, beads.KindNotFound) {
		return beads.Issue{}, state.Binding{}, fmt.Errorf("%w %s", ErrUnknown, epic)
	}
	if err != nil {
		return beads.Issue{}, state.Binding{}, err
	}
	if is.Status == beads.StatusClosed {
		return is, state.Binding{}, fmt.Errorf("%s: %w", epic, ErrClosed)
	}
	b, err := store.UpdateBinding(session, func(b *state.Binding) error {
		if b.Epic != epic {
			b.ArmedAt = now.UTC().Truncate(time.Second)
		}
		b.Epic = epic
		return nil
	})
	if err != nil {
		return is, state.Binding{}, err
	}
	return is, b, nil
}

// ArmFailureText is the context injected when a prompt asked to arm the
// session and it was not armed.
func ArmFailureText(epic string, err error) string {
	switch {
	case errors.Is(err, ErrUnknown):
		return fmt.Sprintf("runtasks: session not armed: beads has no issue %s.", epic)
	case errors.Is(err, ErrClosed):
		return fmt.Sprintf("runtasks: session not armed: %s is closed.", epic)
	}
	return fmt.Sprintf("runtasks: session not armed: %v", err)
}
