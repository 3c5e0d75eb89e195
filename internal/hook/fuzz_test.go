package hook

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the hook input parser: it never
// panics, an accepted payload never carries a NUL in its session id, and
// whatever it accepts converts to the engine's input and re-encodes without
// panicking (the transcript path is cleared so no file is read).
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}`))
	f.Add([]byte(`{"session_id":"../../etc/passwd","hook_event_name":"Stop","background_tasks":[{"id":"b1","type":"bash","status":"running"}]}`))
	f.Add([]byte(`{"session_id":"a\u0000b"}`))
	f.Add([]byte(`{"conversation_id":"c1","generation_id":"g","status":"completed","loop_count":2,"workspace_roots":["/w"],"hook_event_name":"stop"}`))
	f.Add([]byte(`{"session_id":"s","hook_event_name":"AfterAgent","prompt_response":"<promise>ALL TASKS COMPLETE</promise>"}`))
	f.Add([]byte(`{"session_id":"s","turn_id":"t","model":"gpt","hook_event_name":"Stop","last_assistant_message":null}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"session_id":1}`))
	f.Add([]byte("  \n\t"))
	f.Add([]byte(`{"session_id":"s"}{"session_id":"t"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(bytes.NewReader(data))
		if err != nil {
			if p.SessionID != "" || p.HookEventName != "" {
				t.Fatalf("error %v with a non-zero payload %+v", err, p)
			}
			return
		}
		if strings.ContainsRune(p.SessionID, 0) {
			t.Fatalf("accepted a session id with NUL: %q", p.SessionID)
		}
		p.TranscriptPath = ""
		agent := Detect(p)
		if !Known(agent) {
			t.Fatalf("Detect gave unknown agent %q", agent)
		}
		in, err := Input(agent, p, true)
		if err != nil {
			t.Fatalf("Input without a transcript: %v", err)
		}
		if in.Agent != agent {
			t.Fatalf("Input agent %q, want %q", in.Agent, agent)
		}
		if p.LastAssistantMessage != nil && in.FinalMessage != *p.LastAssistantMessage {
			t.Fatalf("final message %q, want last_assistant_message %q", in.FinalMessage, *p.LastAssistantMessage)
		}
	})
}
