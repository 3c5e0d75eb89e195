package transcript

import (
	"testing"

	"github.com/runtasks/runtasks/jsoncodec/jsoncodectest"
)

// The generated decoder of a Claude Code transcript line reads what
// encoding/json reads: content as a string, as blocks, null, or of a
// wrong shape (the line is then not read), and the lines' other fields.
func TestClaudeLineCodec(t *testing.T) {
	jsoncodectest.Decodes[rawClaudeLine](t,
		`{"parentUuid":"p","isSidechain":false,"userType":"external","cwd":"/p","sessionId":"s","version":"2.1.3","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"done <promise>ALL TASKS COMPLETE</promise>"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":3,"output_tokens":9}},"uuid":"u","timestamp":"2026-11-27T04:00:00Z"}`,
		`{"type":"user","message":{"role":"user","content":"please go on"},"isMeta":true}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}],"is_error":true}]}}`,
		`{"type":"user","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"message":{"content":null}}`,
		`{"type":"summary","summary":"s","leafUuid":"l"}`, `{"type":"system","subtype":"compact_boundary","content":"c"}`,
		`{"type":"assistant","message":{"content":{"type":"text"}}}`, `{"type":"assistant","message":{"content":5}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":1}]}}`, `{"type":"assistant","message":{"content":[null,{"type":"text"}]}}`,
		`{"type":"assistant","message":null}`, `{"type":"assistant","message":{"content":"a\u00e9\ud83d\ude00"}}`,
		`{"type":"assistant","message":{"content":["x"]}}`, `{"type":"assistant","message":{"content":[]}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]`, `{"type":"assistant"} x`, `[]`)
}
