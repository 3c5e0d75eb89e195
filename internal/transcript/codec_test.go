package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/jsoncodec/jsoncodectest"
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

// fixtureLines are the lines of the real clients' transcripts in
// testdata/usage.
func fixtureLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "usage", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// The generated decoders of Codex rollout lines read what encoding/json
// reads: every line Codex 0.169 wrote, and shapes around them.
func TestCodexCodecs(t *testing.T) {
	lines := append(fixtureLines(t, "codex-0.169.0.jsonl"),
		`{"type":"response_item","payload":{"type":"message","role":"user","content":null}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"old format"}]}`,
		`{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":null}}`,
		`{"type":"event_msg","payload":null}`, `{"type":"event_msg","payload":{"info":{"total_token_usage":{"input_tokens":"1"}}}}`)
	jsoncodectest.Decodes[rawCodexLine](t, lines...)
	jsoncodectest.Decodes[rawCodexUsage](t, lines...)
	jsoncodectest.Decodes[codexBlocks](t, `[{"type":"input_text","text":"<environment_context>"}]`, `[]`, `null`, `[null]`, `{}`, `[{"text":1}]`)
}

// The generated decoders of Gemini CLI records read what encoding/json
// reads: every line Gemini CLI 0.61 wrote, and shapes around them.
func TestGeminiCodecs(t *testing.T) {
	lines := append(fixtureLines(t, "gemini-0.61.0.jsonl"), fixtureLines(t, "gemini-0.61.0-two-models.jsonl")...)
	lines = append(lines, `{"type":"gemini","content":null}`, `{"type":"user","content":[{"text":"a"},{"text":"b"}]}`,
		`{"$set":{"lastUpdated":"x"}}`, `{"type":"gemini","tokens":null}`, `{"type":"gemini","tokens":{"input":1.5}}`)
	jsoncodectest.Decodes[rawGeminiRecord](t, lines...)
	jsoncodectest.Decodes[rawGeminiUsage](t, lines...)
	jsoncodectest.Decodes[geminiParts](t, `[{"text":"a"}]`, `[]`, `null`, `[{}]`, `"s"`, `[{"text":null}]`)
}
