package engine

import (
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
)

// runtasks disarm releases a session's binding, except from inside that
// same session's agent: then nothing is released, and the attempt is
// recorded as the session's last decision and in the log.
func TestDisarm(t *testing.T) {
	codex := Shell{Agent: "codex", Session: "s1", Var: "CODEX_THREAD_ID"}
	for _, tc := range []struct {
		name     string
		armed    string // s1's epic before
		by       Shell
		released string
		refused  bool
	}{
		{"a person's shell releases", "bd-e", Shell{}, "bd-e", false},
		{"another session's agent releases", "bd-e", Shell{Agent: "codex", Session: "s9", Var: "CODEX_THREAD_ID"}, "bd-e", false},
		{"an agent that does not say its session releases", "bd-e", Shell{Agent: "claude", Var: "CLAUDECODE"}, "bd-e", false},
		{"the session's own agent is refused", "bd-e", codex, "", true},
		{"the own agent, nothing armed: nothing to refuse", "", codex, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &state.Store{Dir: t.TempDir()}
			if _, err := s.UpdateBinding("s1", func(b *state.Binding) error {
				b.Epic, b.ArmedAt = tc.armed, now
				b.Claims = []state.ClaimedRun{{Task: "bd-e.1"}}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			cfg := config.Defaults()
			released, refused, err := Disarm(s, &cfg, "s1", tc.by, now.Add(time.Minute))
			if err != nil || released != tc.released || (refused != nil) != tc.refused {
				t.Fatalf("released %q, refused %+v, err %v; want released %q, refused %v", released, refused, err, tc.released, tc.refused)
			}
			b, _ := s.Binding("s1")
			if want := map[bool]string{true: tc.armed, false: ""}[tc.refused]; b.Epic != want || len(b.Claims) != 1 {
				t.Errorf("binding after: epic %q, %d claims; want epic %q and the claim kept", b.Epic, len(b.Claims), want)
			}
			recs, _ := s.Records(state.RecordFilter{Session: "s1"})
			st, _ := s.Get("s1", "bd-e")
			if !tc.refused {
				if len(recs) != 0 || st.Last != nil {
					t.Errorf("a disarm that took effect, or had nothing to do, is not a decision: %+v", recs)
				}
				return
			}
			if refused.Outcome != state.OutcomeSelfDisarm || refused.Outcome.Class() != state.ClassNeedsPerson || refused.Epic != "bd-e" {
				t.Errorf("refused: %+v", refused)
			}
			if len(recs) != 1 || recs[0].Outcome != state.OutcomeSelfDisarm || recs[0].Agent != "codex" || recs[0].Epic != "bd-e" ||
				recs[0].Max != cfg.Workflow.StopHook.MaxCycles {
				t.Fatalf("decision log: %+v", recs)
			}
			if st.Last == nil || st.Last.Outcome != state.OutcomeSelfDisarm {
				t.Errorf("the session's last decision: %+v", st.Last)
			}
		})
	}
}
