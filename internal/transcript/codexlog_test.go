package transcript

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func readCodexLog(t *testing.T, name string, chunk int) CodexLog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var s CodexLogScanner
	for len(data) > 0 {
		n := min(chunk, len(data))
		s.Write(data[:n])
		data = data[n:]
	}
	s.Flush()
	return s.Log
}

func TestCodexLog(t *testing.T) {
	const rolloutSession = "01a20014-39c4-7960-982b-a6e5b41bfae9"
	const tuiSession = "019d0668-5a2e-7c21-9f3b-2b8c4e1d7a10"
	tests := []struct {
		file      string
		format    string
		session   string
		completes []CodexTurn
		ended     bool
	}{
		{"codex-0.169-done-token.jsonl", FormatRollout, rolloutSession,
			[]CodexTurn{{"01a20014-39e2-7763-9c37-4b7f684d75fe", "Done (reply 2).\nTASKMASTER_DONE::" + rolloutSession}}, false},
		// turn_complete, the alias Codex accepts for task_complete.
		{"codex-0.169-turn-complete.jsonl", FormatRollout, rolloutSession,
			[]CodexTurn{{"01a20014-39e2-7763-9c37-4b7f684d75fe", "Done (reply 2).\nTASKMASTER_DONE::" + rolloutSession}}, false},
		{"codex-0.169-null-complete.jsonl", FormatRollout, rolloutSession,
			[]CodexTurn{{"01a20014-39e2-7763-9c37-4b7f684d75fe", ""}}, false},
		{"codex-0.169-hook-prompt-last.jsonl", FormatRollout, rolloutSession, nil, false},
		{"codex-tui-0.116-done.jsonl", FormatTUILog, tuiSession,
			[]CodexTurn{{"019d0668-6b01-7e55-8a40-0c1f3e2d9b21", "Closing the last task.\nTASKMASTER_DONE::" + tuiSession}}, true},
		{"codex-tui-0.116-missing.jsonl", FormatTUILog, tuiSession,
			[]CodexTurn{
				{"019d0668-6b01-7e55-8a40-0c1f3e2d9b21", "I fixed two bugs. Should I continue? (TASKMASTER_DONE::someone-else)"},
				{"019d0668-7c11-7e55-8a40-0c1f3e2d9b22", "TASKMASTER_DONE::019d0668-0000-0000-0000-000000000000"},
			}, true},
		// Codex 0.117+: UI records only, no codex_event, no session id.
		{"codex-tui-0.169.jsonl", FormatTUILog, "", nil, false},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1 << 20, 7} { // whole file, and torn writes
			l := readCodexLog(t, tt.file, chunk)
			if l.Format != tt.format || l.SessionID != tt.session || l.Ended != tt.ended || !reflect.DeepEqual(l.Completes, tt.completes) {
				t.Errorf("%s (chunk %d): got format %q session %q ended %v completes %q", tt.file, chunk, l.Format, l.SessionID, l.Ended, l.Completes)
			}
		}
	}
}

func TestCodexLogIgnoresJunk(t *testing.T) {
	var l CodexLog
	for _, line := range []string{"", "not json", `{"kind":"codex_event","payload":"x"}`, `{"type":"event_msg","payload":{"type":"task_complete"`, `[1,2]`} {
		l.Add([]byte(line))
	}
	if len(l.Completes) != 0 || l.SessionID != "" {
		t.Errorf("junk read as events: %+v", l)
	}
}
