package state

import (
	"testing"

	"github.com/runtasks/runtasks/internal/usage"
)

func TestSpentByEpic(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	for _, st := range []State{
		{Session: "a", Epic: "bd-e", Spent: usage.Spent{Tokens: usage.Tokens{Input: 1}, Cost: 1}},
		{Session: "b", Epic: "bd-e", Spent: usage.Spent{Tokens: usage.Tokens{Input: 2}, Cost: 2}},
		{Session: "c", Epic: "bd-f", Spent: usage.Spent{Tokens: usage.Tokens{Input: 4}}},
	} {
		if _, err := s.Update(st.Session, st.Epic, func(p *State) error { p.Spent = st.Spent; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.SpentByEpic("a")
	if err != nil {
		t.Fatal(err)
	}
	if got["bd-e"].Input != 2 || got["bd-e"].Cost != 2 || got["bd-f"].Input != 4 {
		t.Errorf("SpentByEpic = %+v", got)
	}
}
