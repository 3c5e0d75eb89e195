package state

import "github.com/runtasks/runtasks/internal/usage"

// SpentByEpic sums what the sessions' loops spent, by state epic key, except
// session except's (the one stopping reads its own under the lock).
func (s *Store) SpentByEpic(except string) (map[string]usage.Spent, error) {
	states, err := s.List()
	if err != nil {
		return nil, err
	}
	out := map[string]usage.Spent{}
	for _, st := range states {
		if st.Session != except && !st.Spent.IsZero() {
			out[st.Epic] = out[st.Epic].Plus(st.Spent)
		}
	}
	return out, nil
}
