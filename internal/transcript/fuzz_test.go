package transcript

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The forward references below read every line from the first; the
// backward readers must agree with them.

func forwardParse[T any](data []byte, parse func([]byte) T) []T {
	var out []T
	for _, line := range bytes.Split(data, []byte("\n")) {
		out = append(out, parse(line))
	}
	return out
}

// mainChain is the isSidechain value of the last message line.
func mainChain(lines []claudeLine) bool {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].msg {
			return lines[i].sidechain
		}
	}
	return false
}

func forwardLastAssistantText(data []byte) string {
	lines := forwardParse(data, parseClaude)
	chain := mainChain(lines)
	type group struct {
		id    string
		texts []string
	}
	var groups []group
	for _, l := range lines {
		if l.msg && l.sidechain != chain {
			continue
		}
		switch l.kind {
		case kindBoundary:
			groups = nil
		case kindAssistant:
			if n := len(groups); n > 0 && l.id != "" && groups[n-1].id == l.id {
				groups[n-1].texts = append(groups[n-1].texts, l.texts...)
			} else {
				groups = append(groups, group{l.id, l.texts})
			}
		}
	}
	for i := len(groups) - 1; i >= 0; i-- {
		if text := joinText(groups[i].texts); text != "" {
			return text
		}
	}
	return ""
}

func forwardToolErrors(data []byte) bool {
	lines := forwardParse(data, parseClaude)
	chain := mainChain(lines)
	bad, newRun := false, true
	for _, l := range lines {
		if l.msg && l.sidechain != chain {
			continue
		}
		switch l.kind {
		case kindBoundary:
			bad, newRun = false, true
		case kindAssistant:
			newRun = true
		case kindToolResult:
			if newRun {
				bad, newRun = false, false
			}
			bad = bad || l.toolError
		}
	}
	return bad
}

func forwardLastAgentMessage(data []byte) string {
	out := ""
	for _, line := range bytes.Split(data, []byte("\n")) {
		if final, start := parseCodex(line); final != "" || start {
			out = final
		}
	}
	return out
}

var fuzzTexts = []string{
	"plain words",
	"<promise>ALL TASKS COMPLETE</promise>",
	"TASKMASTER_DONE::" + claudeSession,
	"  \n ",
	"",
	"line one\nline two",
}

// genClaudeScript turns fuzz bytes into transcript lines, so the fuzzer
// reaches real line shapes and not only invalid JSON.
func genClaudeScript(script []byte) []byte {
	var b bytes.Buffer
	for _, c := range script {
		side := c&0x80 != 0
		id := ""
		if n := (c >> 3) % 4; n > 0 {
			id = fmt.Sprint("msg_", n)
		}
		text := fuzzTexts[int(c>>3)%len(fuzzTexts)]
		var line string
		switch c % 8 {
		case 0:
			line = fmt.Sprintf(`{"type":"user","isSidechain":%v,"message":{"role":"user","content":%q}}`, side, text+"?")
		case 1:
			line = fmt.Sprintf(`{"type":"assistant","isSidechain":%v,"message":{"id":%q,"role":"assistant","content":[{"type":"text","text":%q}]}}`, side, id, text)
		case 2:
			line = fmt.Sprintf(`{"type":"assistant","isSidechain":%v,"message":{"id":%q,"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}`, side, id)
		case 3:
			line = fmt.Sprintf(`{"type":"user","isSidechain":%v,"message":{"role":"user","content":[{"type":"tool_result","content":%q,"is_error":%v,"tool_use_id":"t"}]}}`, side, text, c&0x08 != 0)
		case 4:
			line = fmt.Sprintf(`{"type":"user","isSidechain":%v,"isMeta":%v,"message":{"role":"user","content":%q}}`, side, c&0x08 != 0, "Stop hook feedback:\n"+text)
		case 5:
			if c&0x08 != 0 {
				line = `{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto"}}`
			} else {
				line = fmt.Sprintf(`{"type":"user","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"message":{"role":"user","content":%q}}`, text)
			}
		case 6:
			line = fmt.Sprintf(`{"type":"attachment","attachment":{"type":"hook_blocking_error","blockingError":{"blockingError":%q}}}`, text)
		case 7:
			line = fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":%q}}`, id, text)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func genCodexScript(script []byte) []byte {
	var b bytes.Buffer
	for _, c := range script {
		text := fuzzTexts[int(c>>3)%len(fuzzTexts)]
		var line string
		switch c % 8 {
		case 0:
			line = `{"timestamp":"t","ordinal":1,"type":"event_msg","payload":{"type":"task_started","turn_id":"x"}}`
		case 1:
			line = fmt.Sprintf(`{"timestamp":"t","ordinal":1,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]}}`, text+"?")
		case 2:
			line = fmt.Sprintf(`{"timestamp":"t","ordinal":1,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]}}`, `<hook_prompt hook_run_id="stop:0:h">`+text+`</hook_prompt>`)
		case 3:
			line = fmt.Sprintf(`{"timestamp":"t","ordinal":1,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":%q},{"type":"output_text","text":%q}]}}`, text, fuzzTexts[int(c>>5)%len(fuzzTexts)])
		case 4:
			line = fmt.Sprintf(`{"timestamp":"t","ordinal":1,"type":"event_msg","payload":{"type":"task_complete","turn_id":"x","last_agent_message":%q}}`, text)
		case 5:
			line = `{"timestamp":"t","ordinal":1,"type":"event_msg","payload":{"type":"task_complete","turn_id":"x","last_agent_message":null}}`
		case 6:
			line = fmt.Sprintf(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":%q}]}`, text)
		case 7:
			line = fmt.Sprintf(`{"timestamp":"t","ordinal":1,"type":"response_item","payload":{"type":"reasoning","summary":[],"content":%q}}`, text)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func FuzzLastAssistantText(f *testing.F) {
	f.Add([]byte{0, 1, 9, 2, 3, 4, 1}, []byte(nil))
	f.Add([]byte{0x80, 0x81, 0, 10, 2, 5, 13}, []byte(`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"torn`))
	f.Fuzz(func(t *testing.T, script, tail []byte) {
		data := append(genClaudeScript(script), tail...)
		if len(data) == 0 {
			return
		}
		got, err := lastAssistantText(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if want := forwardLastAssistantText(data); got != want {
			t.Fatalf("LastAssistantText = %q, forward reference = %q\n%s", got, want, data)
		}
		gotErr, err := toolErrors(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if want := forwardToolErrors(data); gotErr != want {
			t.Fatalf("ToolErrors = %v, forward reference = %v\n%s", gotErr, want, data)
		}
	})
}

func FuzzLastAgentMessage(f *testing.F) {
	f.Add([]byte{0, 1, 3, 2, 11, 4}, []byte(nil))
	f.Add([]byte{0, 1, 6, 5, 7}, []byte(`{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"torn`))
	f.Fuzz(func(t *testing.T, script, tail []byte) {
		data := append(genCodexScript(script), tail...)
		if len(data) == 0 {
			return
		}
		got, err := lastAgentMessage(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if want := forwardLastAgentMessage(data); got != want {
			t.Fatalf("LastAgentMessage = %q, forward reference = %q\n%s", got, want, data)
		}
	})
}

// TestForwardReferencesOnFixtures keeps the references honest: they give
// the same answers as the table tests on the real fixtures. (The fixtures
// are not fuzz seeds: the fuzzer spends minutes minimising inputs that big.)
func TestForwardReferencesOnFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		if strings.HasPrefix(name, "codex-") {
			got, _ := LastAgentMessage(p)
			if want := forwardLastAgentMessage(data); got != want {
				t.Errorf("%s: LastAgentMessage %q, reference %q", name, got, want)
			}
			continue
		}
		got, _ := LastAssistantText(p)
		if want := forwardLastAssistantText(data); got != want {
			t.Errorf("%s: LastAssistantText %q, reference %q", name, got, want)
		}
		gotErr, _ := ToolErrors(p)
		if want := forwardToolErrors(data); gotErr != want {
			t.Errorf("%s: ToolErrors %v, reference %v", name, gotErr, want)
		}
	}
}

// FuzzCodexLogScanner follows a growing Codex rollout or TUI log: whatever
// the bytes and however they are split into writes, the log read
// incrementally equals the log read in one write, and never panics.
func FuzzCodexLogScanner(f *testing.F) {
	f.Add([]byte(genCodexScript([]byte{0, 1, 3, 2, 11, 4})), uint8(7))
	f.Add([]byte(`{"ts":"t","dir":"to_tui","kind":"codex_event","payload":{"id":"1","msg":{"type":"task_complete","last_agent_message":"ok"}}}`+"\n"+`{"ts":"t","kind":"session_end"}`), uint8(3))
	f.Add([]byte("{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_complete\",\"turn_id\":\"a\"}}\n\n{torn"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		var whole CodexLogScanner
		whole.Write(data)
		whole.Flush()
		n := int(step)%64 + 1
		var parts CodexLogScanner
		for i := 0; i < len(data); i += n {
			parts.Write(data[i:min(i+n, len(data))])
		}
		parts.Flush()
		if !reflect.DeepEqual(whole.Log, parts.Log) {
			t.Fatalf("split by %d: %+v, whole: %+v", n, parts.Log, whole.Log)
		}
	})
}
