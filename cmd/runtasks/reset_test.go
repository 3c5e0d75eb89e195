package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/state"
)

func TestReset(t *testing.T) {
	tests := []struct {
		name          string
		session, epic string
		want          string
		left          []string // session/epic pairs still stored
	}{
		{name: "one pair", session: "s1", epic: "bd-a",
			want: "Cleared 1 session state(s) for session s1, epic bd-a:\n  s1  bd-a  3 cycle(s)\n",
			left: []string{"s2/bd-a", "s3/bd-b"}},
		{name: "epic", epic: "bd-a",
			want: "Cleared 2 session state(s) for epic bd-a:\n  s1  bd-a  3 cycle(s)\n  s2  bd-a  0 cycle(s)\n",
			left: []string{"s3/bd-b"}},
		{name: "session", session: "s3",
			want: "Cleared 1 session state(s) for session s3:\n  s3  bd-b  1 cycle(s)\n",
			left: []string{"s1/bd-a", "s2/bd-a"}},
		{name: "all",
			want: "Cleared 3 session state(s):\n  s1  bd-a  3 cycle(s)\n  s3  bd-b  1 cycle(s)\n  s2  bd-a  0 cycle(s)\n"},
		{name: "no match", session: "s1", epic: "bd-b",
			want: "Nothing to reset for session s1, epic bd-b.\n",
			left: []string{"s1/bd-a", "s2/bd-a", "s3/bd-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := statusFixture(t)
			before, _ := s.Records(state.RecordFilter{})
			var out, errOut bytes.Buffer
			err := runReset(&resetOptions{Factory: &Factory{Out: &out, Err: &errOut, Now: func() time.Time { return statusNow }},
				Store: s, Session: tt.session, Epic: tt.epic})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tt.want)
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr: %s", errOut.String())
			}
			states, _ := s.List()
			var left []string
			for _, st := range states {
				left = append(left, st.Session+"/"+st.Epic)
			}
			slices.Sort(left)
			if !slices.Equal(left, tt.left) {
				t.Errorf("left %v, want %v", left, tt.left)
			}
			// The log keeps everything and gains one reset record per state.
			after, _ := s.Records(state.RecordFilter{})
			cleared := 3 - len(tt.left)
			if len(after) != len(before)+cleared {
				t.Fatalf("log: %d records, want %d", len(after), len(before)+cleared)
			}
			for _, r := range after[len(before):] {
				if r.Outcome != state.OutcomeReset || r.Block || r.Cycle != 0 || !r.Time.Equal(statusNow) ||
					!strings.Contains(r.Why, "runtasks reset") {
					t.Errorf("reset record = %+v", r)
				}
			}
		})
	}
}

func TestResetThenCountsRestart(t *testing.T) {
	s := statusFixture(t)
	var out bytes.Buffer
	if err := runReset(&resetOptions{Factory: &Factory{Out: &out, Err: &out, Now: time.Now}, Store: s, Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Update("s1", "bd-a", func(st *state.State) error { st.Cycles++; return nil })
	if err != nil || st.Cycles != 1 || st.Last != nil {
		t.Errorf("after reset: %+v, %v; want a fresh state with 1 cycle", st, err)
	}
}

func TestResetLogUnwritable(t *testing.T) {
	s := statusFixture(t)
	// The log path is taken by a directory: states are cleared, the
	// failure to record it is a warning.
	os.Remove(s.LogPath())
	if err := os.Mkdir(s.LogPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runReset(&resetOptions{Factory: &Factory{Out: &out, Err: &errOut, Now: time.Now}, Store: s}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Cleared 3") {
		t.Errorf("stdout: %s", out.String())
	}
	if !strings.Contains(errOut.String(), "warning: decision log") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

func TestResetUnreadableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	s := &state.Store{Dir: filepath.Join(file, "state")}
	var out bytes.Buffer
	if err := runReset(&resetOptions{Factory: &Factory{Out: &out, Err: &out, Now: time.Now}, Store: s}); err == nil {
		t.Errorf("reset in a state dir under a file: no error; output %s", out.String())
	}
}
