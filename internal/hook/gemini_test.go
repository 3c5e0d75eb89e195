package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestGeminiFinalMessage: Gemini CLI's final message is the last model
// record of its transcript; prompt_response (every model text since the
// prompt) only when there is no transcript to read.
func TestGeminiFinalMessage(t *testing.T) {
	fixture, err := filepath.Abs("../transcript/testdata/gemini-0.61-earlier-promise.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// What Gemini CLI 0.61 sends after the fixture's last turn.
	cumulative := "Context is running low, saving state.\n<promise>CONTEXT LIMIT - CHECKPOINT</promise>\nCommitting the lexer.\nCommitted. Now working on rt-lal.2."
	tests := []struct {
		name       string
		transcript string
		want       string
		wantErr    string
	}{
		{name: "transcript", transcript: fixture, want: "Committed. Now working on rt-lal.2."},
		{name: "no transcript_path", want: cumulative},
		{name: "transcript not written yet", transcript: filepath.Join(dir, "missing.jsonl"), want: cumulative},
		{name: "empty transcript", transcript: empty, want: cumulative},
		// A FIFO is refused, never read and never replaced by the
		// cumulative text.
		{name: "FIFO", transcript: fifo, want: "", wantErr: "FIFO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]any{
				"session_id": "g-1", "transcript_path": tt.transcript, "cwd": dir,
				"hook_event_name": "AfterAgent", "prompt": "/run-tasks rt-lal",
				"prompt_response": cumulative, "stop_hook_active": false,
			})
			p, err := Parse(strings.NewReader(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if a := Detect(p); a != Gemini {
				t.Fatalf("Detect = %s", a)
			}
			in, err := Input(Gemini, p, false)
			if in.FinalMessage != tt.want {
				t.Errorf("FinalMessage = %q, want %q", in.FinalMessage, tt.want)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}
