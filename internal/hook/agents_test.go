package hook

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

var update = flag.Bool("update", false, "rewrite golden files")

// stopSchema is what each agent accepts from a stop hook, from the
// agents' own schemas (../shared/reference/codex-hooks.md §6,
// claude-code-hooks.md §4, Gemini CLI docs/hooks/reference.md, Cursor's
// hooks documentation). It is written out here, apart from the encoder, so
// that a key the encoder adds by mistake fails the test.
var stopSchema = map[string]struct {
	keys      []string
	decisions []string // allowed values of "decision"
	block     string   // the decision value that blocks ("" = no decision key)
	feedback  string   // the key carrying the text for the model
}{
	Codex:  {keys: []string{"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}, decisions: []string{"block"}, block: "block", feedback: "reason"},
	Claude: {keys: []string{"continue", "suppressOutput", "stopReason", "decision", "systemMessage", "terminalSequence", "reason", "hookSpecificOutput"}, decisions: []string{"approve", "block"}, block: "block", feedback: "reason"},
	Gemini: {keys: []string{"systemMessage", "suppressOutput", "continue", "stopReason", "decision", "reason", "hookSpecificOutput"}, decisions: []string{"allow", "deny", "block"}, block: "deny", feedback: "reason"},
	Cursor: {keys: []string{"followup_message"}, feedback: "followup_message"},
}

var contextSchema = map[string][]string{
	Codex:  {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"},
	Claude: {"continue", "suppressOutput", "stopReason", "decision", "systemMessage", "reason", "hookSpecificOutput"},
	Gemini: {"systemMessage", "suppressOutput", "continue", "stopReason", "decision", "reason", "hookSpecificOutput"},
	Cursor: {"additional_context", "env"},
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./hook -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got: %s\nwant: %s", name, got, want)
	}
}

// objectKeys decodes out as exactly one JSON object and returns it.
func object(t *testing.T, out []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not a JSON object: %q: %v", out, err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value: %q", out)
	}
	if !bytes.HasSuffix(out, []byte("\n")) || bytes.Count(out, []byte("\n")) != 1 {
		t.Fatalf("want one line: %q", out)
	}
	return m
}

func TestEncodeStopGolden(t *testing.T) {
	decisions := map[string]engine.Decision{
		"block":          {Block: true, Reason: "Work remains.\ncycle 1/50 · 2 ready (next: bd-1, bd-2)", Outcome: state.OutcomeContinue},
		"block-message":  {Block: true, Reason: "completion rejected: 1 remain", SystemMessage: "runtasks: promise rejected", Outcome: state.OutcomeRejected},
		"allow-message":  {SystemMessage: "runtasks: epic bd-x complete.", Outcome: state.OutcomeComplete},
		"allow-silent":   {Outcome: state.OutcomeNotDriven},
		"block-escaping": {Block: true, Reason: `say <promise>ALL TASKS COMPLETE</promise> & "quote"`, Outcome: state.OutcomeContinue},
	}
	names := make([]string, 0, len(decisions))
	for n := range decisions {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, agent := range Agents {
		for _, name := range names {
			d := decisions[name]
			t.Run(agent+"/"+name, func(t *testing.T) {
				out := EncodeStop(agent, d)
				golden(t, "stop-"+agent+"-"+name, out)
				sc := stopSchema[agent]
				if len(out) == 0 {
					if d.Block {
						t.Fatalf("a block printed nothing")
					}
					if d.SystemMessage != "" && slices.Contains(sc.keys, "systemMessage") {
						t.Fatalf("the message was dropped though %s has systemMessage", agent)
					}
					return
				}
				m := object(t, out)
				for k := range m {
					if !slices.Contains(sc.keys, k) {
						t.Errorf("key %q is outside %s's schema %v", k, agent, sc.keys)
					}
				}
				if dv, ok := m["decision"]; ok && !slices.Contains(sc.decisions, dv.(string)) {
					t.Errorf("decision %v not in %v", dv, sc.decisions)
				}
				if d.Block {
					if sc.block != "" && m["decision"] != sc.block {
						t.Errorf("decision = %v, want %q", m["decision"], sc.block)
					}
					if m[sc.feedback] != d.Reason {
						t.Errorf("%s = %v, want the reason", sc.feedback, m[sc.feedback])
					}
				} else if _, ok := m["decision"]; ok {
					t.Errorf("an allowed stop carries a decision: %s", out)
				}
				if agent == Codex && d.Block && len(m) != 2 {
					t.Errorf("a Codex block must be exactly decision and reason: %s", out)
				}
			})
		}
	}
}

func TestEncodeContextGolden(t *testing.T) {
	text := "runtasks: this session drives epic bd-x7y8 (2 ready)."
	for _, agent := range Agents {
		for _, ev := range []string{EventSessionStart, EventPromptSubmit} {
			t.Run(agent+"/"+ev, func(t *testing.T) {
				out := EncodeContextMessage(agent, ev, text, "")
				golden(t, "context-"+agent+"-"+ev, out)
				if agent == Cursor && ev == EventPromptSubmit {
					if out != nil {
						t.Fatalf("Cursor's beforeSubmitPrompt takes no context: %s", out)
					}
					return
				}
				m := object(t, out)
				for k := range m {
					if !slices.Contains(contextSchema[agent], k) {
						t.Errorf("key %q is outside %s's schema", k, agent)
					}
				}
				if agent == Cursor {
					if m["additional_context"] != text {
						t.Errorf("additional_context = %v", m["additional_context"])
					}
					return
				}
				hso, _ := m["hookSpecificOutput"].(map[string]any)
				if hso["additionalContext"] != text || hso["hookEventName"] != NativeEvent(agent, ev) {
					t.Errorf("hookSpecificOutput = %v", hso)
				}
				// The agent's own event name is accepted as input too.
				if again := EncodeContextMessage(agent, NativeEvent(agent, ev), text, ""); !bytes.Equal(again, out) {
					t.Errorf("native event name gives %s", again)
				}
			})
		}
	}
	if EncodeContextMessage(Claude, EventSessionStart, "", "") != nil {
		t.Error("empty context printed something")
	}
	if EncodeContextMessage(Claude, EventStop, text, "") != nil {
		t.Error("context at Stop printed something")
	}
	if EncodeContextMessage("vim", EventSessionStart, text, "") != nil {
		t.Error("unknown agent printed something")
	}
	// A message for the person rides along; alone, it is EncodeMessage; Cursor has no field for it.
	var got struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string }
		SystemMessage      string
	}
	if err := json.Unmarshal(EncodeContextMessage(Codex, "SessionStart", "ctx", "note"), &got); err != nil ||
		got.HookSpecificOutput.HookEventName != "SessionStart" || got.HookSpecificOutput.AdditionalContext != "ctx" || got.SystemMessage != "note" {
		t.Errorf("context with a message: %+v, %v", got, err)
	}
	if out := EncodeContextMessage(Gemini, EventPromptSubmit, "", "note"); !bytes.Equal(out, EncodeMessage(Gemini, "note")) {
		t.Errorf("a message without context: %s", out)
	}
	if out := EncodeContextMessage(Cursor, EventSessionStart, "ctx", "note"); string(out) != `{"additional_context":"ctx"}`+"\n" {
		t.Errorf("Cursor: %s", out)
	}
}

// Real-shaped payloads of each agent (Claude Code 2.1.330 and Codex 0.169
// from the reference captures; Gemini CLI and Cursor from their documented
// schemas).
var payloads = map[string]string{
	"claude-stop":          `{"session_id":"d58d2a67","transcript_path":"/h/.claude/projects/-p/d58d2a67.jsonl","cwd":"/p","prompt_id":"f3","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"First answer: hello.","background_tasks":[],"session_crons":[]}`,
	"claude-sessionstart":  `{"session_id":"d58d2a67","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`,
	"codex-stop":           `{"session_id":"01a20014","turn_id":"01a20014-39e2","transcript_path":"/c/sessions/rollout.jsonl","cwd":"/p","hook_event_name":"Stop","model":"fake-model","permission_mode":"bypassPermissions","stop_hook_active":true,"last_assistant_message":"Done (reply 2)."}`,
	"gemini-afteragent":    `{"session_id":"g-1","transcript_path":"/g/chat.json","cwd":"/p","hook_event_name":"AfterAgent","timestamp":"2026-11-21T10:30:00Z","prompt":"do the tasks","prompt_response":"All done. <promise>ALL TASKS COMPLETE</promise>","stop_hook_active":false}`,
	"gemini-beforeagent":   `{"session_id":"g-1","transcript_path":"/g/chat.json","cwd":"/p","hook_event_name":"BeforeAgent","timestamp":"2026-11-21T10:30:00Z","prompt":"work bd-x7y8"}`,
	"cursor-stop":          `{"conversation_id":"cdefee2d","generation_id":"26b45fb6","model":"gpt-5","hook_event_name":"stop","cursor_version":"1.7.2","workspace_roots":["/p"],"user_email":null,"status":"completed","loop_count":2}`,
	"cursor-stop-first":    `{"conversation_id":"cdefee2d","generation_id":"26b45fb6","hook_event_name":"stop","workspace_roots":["/p","/q"],"status":"completed","loop_count":0}`,
	"cursor-sessionstart":  `{"conversation_id":"cdefee2d","generation_id":"26b45fb6","hook_event_name":"sessionStart","workspace_roots":["/p"]}`,
	"cursor-before-submit": `{"conversation_id":"cdefee2d","generation_id":"26b45fb6","hook_event_name":"beforeSubmitPrompt","workspace_roots":["/p"],"prompt":"hi","attachments":[]}`,
}

func TestDetect(t *testing.T) {
	for name, raw := range payloads {
		p, err := Parse(strings.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := name[:strings.IndexByte(name, '-')]
		if got := Detect(p); got != want {
			t.Errorf("%s: Detect = %s, want %s", name, got, want)
		}
	}
}

func TestInputPerAgent(t *testing.T) {
	parse := func(name string) Payload {
		p, err := Parse(strings.NewReader(payloads[name]))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	in, err := Input(Gemini, parse("gemini-afteragent"), false)
	if err != nil || in.FinalMessage != "All done. <promise>ALL TASKS COMPLETE</promise>" || in.SessionID != "g-1" || in.Event != "AfterAgent" {
		t.Errorf("gemini: %+v, %v", in, err)
	}
	in, err = Input(Cursor, parse("cursor-stop"), false)
	if err != nil || in.SessionID != "cdefee2d" || in.FinalMessage != "" {
		t.Errorf("cursor: %+v, %v", in, err)
	}
	in, _ = Input(Cursor, parse("cursor-stop-first"), false)
	if in.SessionID != "cdefee2d" {
		t.Errorf("cursor first stop: %+v", in)
	}
	in, _ = Input(Codex, parse("codex-stop"), false)
	if in.FinalMessage != "Done (reply 2)." {
		t.Errorf("codex: %+v", in)
	}
}

func TestEvents(t *testing.T) {
	for _, agent := range Agents {
		if NativeEvent(agent, EventStop) == "" {
			t.Errorf("%s has no stop event", agent)
		}
		for _, ev := range []string{EventStop, EventPromptSubmit, EventSessionStart} {
			if n := NativeEvent(agent, ev); n != "" && CanonicalEvent(agent, n) != ev {
				t.Errorf("%s: %s → %s → %s", agent, ev, n, CanonicalEvent(agent, n))
			}
		}
	}
	if NativeEvent(Gemini, EventStop) != "AfterAgent" || NativeEvent(Cursor, EventPromptSubmit) != "beforeSubmitPrompt" {
		t.Error("native names")
	}
	if Known("vim") || !Known(Cursor) {
		t.Error("Known")
	}
}

// The stop hook reads the usage of the turns since the previous stop
// from each agent's transcript.
func TestUsageByAgent(t *testing.T) {
	for _, tc := range []struct {
		agent, file string
		want        usage.ModelUsage
	}{
		// The whole recorded Claude Code 2.1.330 run: its last stop covers responses 4 and 5.
		{Claude, "claude-2.1.330.jsonl", usage.ModelUsage{Model: "claude-opus-5-5",
			Tokens: usage.Tokens{Input: 209, Output: 96, CacheRead: 9000, CacheWrite: 63}}},
		{Codex, "codex-0.169.0.jsonl", usage.ModelUsage{Model: "fake-model",
			Tokens: usage.Tokens{Input: 209, Output: 96, CacheRead: 9000}}},
		{Gemini, "gemini-0.61.0.jsonl", usage.ModelUsage{Model: "gemini-2.5-flash",
			Tokens: usage.Tokens{Input: 209, Output: 96, CacheRead: 9000}}},
	} {
		path := filepath.Join("..", "transcript", "testdata", "usage", tc.file)
		u, _, err := Usage(tc.agent, Payload{TranscriptPath: path}, usage.UsageMark{})
		if err != nil {
			t.Fatalf("%s: %v", tc.agent, err)
		}
		if len(u.Models) == 0 || u.Models[0] != tc.want {
			t.Errorf("%s: usage %+v, want first %+v", tc.agent, u, tc.want)
		}
	}
	if u, _, err := Usage(Cursor, Payload{TranscriptPath: "/nonexistent"}, usage.UsageMark{}); err != nil || len(u.Models) != 0 {
		t.Errorf("cursor: %+v %v; want no usage and no error", u, err)
	}
	// A transcript that cannot be read (here a directory) is an error; a
	// missing or empty one is "not written yet" (below).
	if _, _, err := Usage(Claude, Payload{TranscriptPath: t.TempDir()}, usage.UsageMark{}); err == nil {
		t.Errorf("an unreadable transcript is an error")
	}
}

// Claude Code may write a response to its transcript only after the Stop
// hook that followed it ran (seen with 2.1.330 under load), and a line may
// be half written when a hook reads it. Replayed on the recorded
// transcript as it grew: each stop sees the file up to before one of
// responses 1, 3 and 5 (not written yet), then up to the middle of a line
// of response 4 (torn), then whole. Each stop reads on from the previous
// one's mark, as Stop does: every response is counted exactly once.
func TestUsageLateResponsesCountedOnce(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "usage", "claude-2.1.330.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	before := func(marker string) int {
		i := strings.Index(string(data), marker)
		if i < 0 {
			t.Fatalf("no %q", marker)
		}
		return strings.LastIndexByte(string(data[:i]), '\n') + 1
	}
	ends := []int{
		before(`"id":"msg_fake0001"`),      // stop 1: response 1 not written yet
		before(`"id":"msg_fake0003"`),      // stop 2: response 3 not written yet
		before(`"id":"msg_fake0004"`) + 40, // stop 3: a line of response 4 half written
		before(`"id":"msg_fake0005"`),      // stop 4: response 5 not written yet
		len(data),                          // a later stop: everything
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	var mark usage.UsageMark
	cursor := ""
	var total usage.Tokens
	for i, end := range ends {
		if err := os.WriteFile(path, data[:end], 0o644); err != nil {
			t.Fatal(err)
		}
		u, m, err := Usage(Claude, Payload{TranscriptPath: path}, mark)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && m.Offset < mark.Offset {
			t.Errorf("stop %d: mark went back from %d to %d", i+1, mark.Offset, m.Offset)
		}
		if m.Offset > int64(end) || (m.Offset > 0 && data[m.Offset-1] != '\n') {
			t.Errorf("stop %d: mark %d is not the end of a whole line (file %d bytes)", i+1, m.Offset, end)
		}
		mark = m
		counted, next := u.Since(cursor)
		if next != "" {
			cursor = next
		}
		for _, m := range counted.Models {
			total = total.Plus(m.Tokens)
		}
		t.Logf("stop %d: %+v", i+1, counted.Models)
	}
	// The client's own totals for the five responses.
	if want := (usage.Tokens{Input: 515, Output: 165, CacheRead: 15000, CacheWrite: 105}); total != want {
		t.Errorf("counted %+v over the stops, want %+v", total, want)
	}
}

// Whenever the stops fall, after any line or in the middle of one, the
// stops of a recorded run sum to what the client reported for it, with
// the model named: a response is counted once even when its lines (Claude
// Code writes one per content block) straddle a stop, and Codex's model,
// named only at a turn's start, is carried in the mark.
func TestUsageStopsAnywhereSumToTheRun(t *testing.T) {
	for _, tc := range []struct {
		agent, fixture, model string
		want                  usage.Tokens
	}{
		{Claude, "claude-2.1.330.jsonl", "claude-opus-5-5", usage.Tokens{Input: 515, Output: 165, CacheRead: 15000, CacheWrite: 105}},
		{Codex, "codex-0.169.0.jsonl", "fake-model", usage.Tokens{Input: 515, Output: 165, CacheRead: 15000}},
		{Gemini, "gemini-0.61.0.jsonl", "gemini-2.5-flash", usage.Tokens{Input: 515, Output: 165, CacheRead: 15000}},
	} {
		data, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "usage", tc.fixture))
		if err != nil {
			t.Fatal(err)
		}
		for _, half := range []bool{false, true} {
			var ends []int
			for i, prev := 0, 0; i < len(data); i++ {
				if data[i] == '\n' {
					if half {
						ends = append(ends, (prev+i)/2)
					}
					ends = append(ends, i+1)
					prev = i + 1
				}
			}
			path := filepath.Join(t.TempDir(), tc.fixture)
			var mark usage.UsageMark
			cursor := ""
			var total usage.Tokens
			for _, end := range ends {
				if err := os.WriteFile(path, data[:end], 0o644); err != nil {
					t.Fatal(err)
				}
				u, m, err := Usage(tc.agent, Payload{TranscriptPath: path}, mark)
				if err != nil {
					t.Fatal(err)
				}
				mark = m
				counted, next := u.Since(cursor)
				if next != "" {
					cursor = next
				}
				for _, m := range counted.Models {
					if m.Model != tc.model {
						t.Errorf("%s: counted under model %q, want %q", tc.fixture, m.Model, tc.model)
					}
					total = total.Plus(m.Tokens)
				}
			}
			if total != tc.want {
				t.Errorf("%s, %d stops (mid-line too: %v): counted %+v, the client reported %+v", tc.fixture, len(ends), half, total, tc.want)
			}
		}
	}
}

// A transcript the client has not written yet (missing or empty) is
// "nothing written yet", not an error: the engine then counts, at the next
// stop, every response written by then (usage.StartCursor).
func TestUsageBeforeTheTranscriptIsWritten(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.jsonl"), empty} {
		u, _, err := Usage(Claude, Payload{TranscriptPath: path}, usage.UsageMark{})
		if err != nil || !u.Transcript || len(u.Entries) != 0 {
			t.Errorf("%s: %+v, %v; want an empty transcript read", filepath.Base(path), u, err)
		}
		if _, cursor := u.Since(""); cursor != usage.StartCursor {
			t.Errorf("%s: cursor %q, want the start cursor", filepath.Base(path), cursor)
		}
	}
}

// The agent session a command's shell belongs to, from each agent's
// variables; none in a person's shell.
func TestShellSession(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want engine.Shell
	}{
		{map[string]string{}, engine.Shell{}},
		{map[string]string{"RUNTASKS_SESSION": "s1"}, engine.Shell{}},
		{map[string]string{"CODEX_THREAD_ID": "t1", "CODEX_SESSION_ID": "t1"}, engine.Shell{Agent: Codex, Session: "t1", Var: "CODEX_THREAD_ID"}},
		{map[string]string{"CODEX_SESSION_ID": "t1"}, engine.Shell{Agent: Codex, Session: "t1", Var: "CODEX_SESSION_ID"}},
		{map[string]string{"CLAUDE_CODE_SESSION_ID": "c1", "CLAUDECODE": "1", "RUNTASKS_SESSION": "c1"}, engine.Shell{Agent: Claude, Session: "c1", Var: "CLAUDE_CODE_SESSION_ID"}},
		{map[string]string{"CLAUDE_CODE_SESSION_ID": "", "CLAUDECODE": "1", "RUNTASKS_SESSION": "c1"}, engine.Shell{Agent: Claude, Session: "c1", Var: "RUNTASKS_SESSION"}},
		{map[string]string{"CLAUDECODE": "1"}, engine.Shell{Agent: Claude, Var: "CLAUDECODE"}},
		{map[string]string{"GEMINI_SESSION_ID": "g1", "GEMINI_CLI": "1"}, engine.Shell{Agent: Gemini, Session: "g1", Var: "GEMINI_SESSION_ID"}},
		{map[string]string{"GEMINI_CLI": "1"}, engine.Shell{Agent: Gemini, Var: "GEMINI_CLI"}},
	} {
		if got := ShellSession(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.env, got, tc.want)
		}
	}
}
