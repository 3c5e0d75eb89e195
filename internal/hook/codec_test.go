package hook

import (
	"testing"

	"github.com/runtasks/runtasks/internal/jsoncodec/jsoncodectest"
)

// The generated decoder of the hook's input reads what encoding/json
// reads, from every agent's shape; the generated encoder of the Stop
// answer writes what json.Marshal writes.
func TestPayloadCodec(t *testing.T) {
	jsoncodectest.Decodes[Payload](t,
		`{"session_id":"s-1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done <promise>ALL TASKS COMPLETE</promise>","background_tasks":[{"id":"b1","type":"shell","status":"running"}]}`,
		`{"session_id":"s","hook_event_name":"Stop","turn_id":"t","model":"gpt-5","permission_mode":"default","last_assistant_message":null}`,
		`{"session_id":"s","hook_event_name":"AfterAgent","prompt_response":"ok","timestamp":"2026-11-27T04:00:00Z","prompt":"p"}`,
		`{"conversation_id":"c","generation_id":"g","hook_event_name":"stop","status":"completed","loop_count":2,"workspace_roots":["/w"],"cursor_version":"1.7"}`,
		`{"session_id":"s","loop_count":1.5}`, `{"session_id":"s","background_tasks":{}}`, `{"session_id":"s","stop_hook_active":"yes"}`,
		`{"session_id":"s","extra":{"deep":[{"a":null}]},"model":"m"}`, `{"session_id":"s\u0000x"}`,
		`[1]`, `"s"`, `null`, `{}`, `{"session_id":"s"`, `{"session_id":"s"} {}`)
}

func TestStopOutputCodec(t *testing.T) {
	jsoncodectest.Equivalent[StopOutput](t, true,
		`{"decision":"block","reason":"go on \u003cpromise\u003e","systemMessage":"runtasks: cycle 2/20"}`)
}
