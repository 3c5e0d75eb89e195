package engine

import (
	"fmt"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
)

// Shell is the agent session whose shell runs a command, from the
// variables each agent exports to the commands its model runs
// (hook.ShellSession); zero in a person's own shell.
type Shell struct {
	Agent   string // claude, codex, gemini ("" outside an agent)
	Session string // "" when the agent does not say
	Var     string // the variable that told the session
}

// Disarm releases session's binding (runtasks disarm) and returns the epic
// it was armed for. The loop is the person's: a disarm run by that same
// session's agent (by) releases nothing; it is recorded as needing a person
// (OutcomeSelfDisarm) and the decision returned for notify.
func Disarm(s *state.Store, cfg *config.Config, session string, by Shell, now time.Time) (released string, refused *Decision, err error) {
	if by.Session == "" || by.Session != session {
		_, err = s.UpdateBinding(session, func(b *state.Binding) error {
			released, b.Epic, b.ArmedAt = b.Epic, "", time.Time{}
			return nil
		})
		return released, nil, err
	}
	b, err := s.Binding(session)
	if err != nil || b.Epic == "" {
		return "", nil, err
	}
	why := fmt.Sprintf("needs a person: the session's own agent (%s, %s) ran runtasks disarm; refused: the loop stays armed for %s",
		by.Agent, by.Var, b.Epic)
	dec := Decision{Outcome: state.OutcomeSelfDisarm, Epic: b.Epic, Why: why,
		SystemMessage: "runtasks: " + why + "."}
	rec := state.Record{Time: now.UTC(), Session: session, Epic: b.Epic, Agent: by.Agent, Event: "disarm",
		Outcome: dec.Outcome, Why: why, Max: MaxCycles(cfg, b.Epic)}
	if _, err := s.Update(session, b.Epic, func(st *state.State) error {
		rec.Cycle, _ = st.Count() // the loop's count, unchanged: a disarm is no cycle
		st.Last = &rec
		return nil
	}); err != nil {
		return "", &dec, err
	}
	return "", &dec, s.Append(rec)
}
