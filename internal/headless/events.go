package headless

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/usage"
)

// Event is one line of an agent's event stream, reduced to what runtasks uses.
type Event struct {
	SessionID string       // from the event that names the agent's session
	Action    string       // what the agent is doing now ("Bash: go test ./...", "thinking")
	Text      string       // assistant text, or the final message the ending event carries
	Final     bool         // the event ends the run (Claude result, Codex turn.completed or turn.failed)
	Error     string       // the agent's own error message
	Usage     *usage.Usage // the run's token usage, from the ending event
}

// Summary accumulates one agent run's events.
type Summary struct {
	SessionID    string       `json:"session_id,omitempty"`
	FinalMessage string       `json:"final_message,omitempty"` // the result text, else the last assistant text
	Error        string       `json:"error,omitempty"`
	Events       int          `json:"events"`
	Usage        *usage.Usage `json:"usage,omitempty"` // several final events add up
}

// Add folds one event into the summary.
func (s *Summary) Add(e Event) {
	s.Events++
	s.SessionID, s.Error = cmp.Or(e.SessionID, s.SessionID), cmp.Or(e.Error, s.Error)
	s.FinalMessage = cmp.Or(e.Text, s.FinalMessage)
	if e.Usage != nil {
		if s.Usage == nil {
			s.Usage = &usage.Usage{}
		}
		s.Usage.Models = append(s.Usage.Models, e.Usage.Models...)
	}
}

// Parser turns one line of an agent's stdout into an Event. A line that is
// not JSON is an error; an unknown event type gives an empty Event, so new
// event types never break a run.
type Parser func(line []byte) (Event, error)

// ParserFor returns the event parser of an agent (claude or codex).
func ParserFor(agent string) (Parser, error) {
	if p := map[string]Parser{AgentClaude: ParseClaude, AgentCodex: ParseCodex}[agent]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want %s or %s)", agent, AgentClaude, AgentCodex)
}

// claudeLine is the subset of a Claude Code stream-json line read here.
type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	IsError  bool     `json:"is_error"` // result
	Result   string   `json:"result"`
	Errors   []string `json:"errors"`
	HookName string   `json:"hook_name"` // system/hook_started
	// result: tokens by model
	ModelUsage map[string]struct {
		InputTokens              int64 `json:"inputTokens"`
		OutputTokens             int64 `json:"outputTokens"`
		CacheReadInputTokens     int64 `json:"cacheReadInputTokens"`
		CacheCreationInputTokens int64 `json:"cacheCreationInputTokens"`
	} `json:"modelUsage"`
}

type claudeBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// ParseClaude parses one Claude Code stream-json line.
func ParseClaude(line []byte) (Event, error) {
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil {
		return Event{}, fmt.Errorf("not a stream-json event: %w", err)
	}
	switch l.Type {
	case "system":
		switch l.Subtype {
		case "init":
			act := "session started"
			if l.Model != "" {
				act += " (" + l.Model + ")"
			}
			return Event{SessionID: l.SessionID, Action: act}, nil
		case "hook_started":
			if l.HookName != "" {
				return Event{Action: "hook " + l.HookName}, nil
			}
		case "compact_boundary":
			return Event{Action: "compacting context"}, nil
		}
		return Event{}, nil
	case "assistant":
		var e Event
		for _, b := range claudeBlocks(l.Message.Content) {
			switch b.Type {
			case "text":
				if t := strings.TrimSpace(b.Text); t != "" {
					e.Text = t
					e.Action = "says: " + firstLine(t)
				}
			case "thinking", "redacted_thinking":
				e.Action = "thinking"
			case "tool_use", "server_tool_use":
				e.Action = toolAction(b.Name, b.Input)
			}
		}
		return e, nil
	case "user":
		for _, b := range claudeBlocks(l.Message.Content) {
			if b.Type == "tool_result" && b.IsError {
				return Event{Action: "tool error: " + firstLine(blockText(b.Content))}, nil
			}
		}
		return Event{}, nil
	case "result":
		e := Event{SessionID: l.SessionID, Final: true, Text: l.Result, Action: "finished"}
		if len(l.ModelUsage) > 0 {
			e.Usage = &usage.Usage{}
			for _, model := range slices.Sorted(maps.Keys(l.ModelUsage)) {
				m := l.ModelUsage[model]
				e.Usage.Models = append(e.Usage.Models, usage.ModelUsage{Model: model, Tokens: usage.Tokens{
					Input: m.InputTokens, Output: m.OutputTokens, CacheRead: m.CacheReadInputTokens, CacheWrite: m.CacheCreationInputTokens}})
			}
		}
		if l.IsError || (l.Subtype != "" && l.Subtype != "success") {
			e.Error = oneLine(cmp.Or(l.Result, strings.Join(l.Errors, "; "), l.Subtype), 300)
			e.Action = "failed: " + l.Subtype
		}
		return e, nil
	}
	return Event{}, nil
}

// claudeBlocks reads a content array; a string content (a prompt or hook
// feedback) has none.
func claudeBlocks(raw json.RawMessage) (blocks []claudeBlock) {
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

// blockText reads a tool_result's content: a string or text blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	for _, b := range claudeBlocks(raw) {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, " ")
}

// toolAction describes a Claude tool call by its most telling input.
func toolAction(name string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query", "description", "prompt"} {
		if v, ok := in[k].(string); ok && strings.TrimSpace(v) != "" {
			return name + ": " + firstLine(v)
		}
	}
	if name == "TodoWrite" {
		if todos, ok := in["todos"].([]any); ok {
			done := 0
			for _, t := range todos {
				if m, ok := t.(map[string]any); ok && m["status"] == "completed" {
					done++
				}
			}
			return fmt.Sprintf("TodoWrite: %d/%d done", done, len(todos))
		}
	}
	return name
}

// codexLine is the subset of a codex exec --json line read here.
type codexLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    struct {
		Message string `json:"message"`
	} `json:"error"`
	Item  *codexItem `json:"item"`
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		CacheWriteTokens  int64 `json:"cache_write_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
}

type codexItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Message  string `json:"message"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Changes  []struct {
		Path string `json:"path"`
	} `json:"changes"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Query  string `json:"query"`
	Items  []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

// ParseCodex parses one codex exec --json line.
func ParseCodex(line []byte) (Event, error) {
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil {
		return Event{}, fmt.Errorf("not an exec --json event: %w", err)
	}
	switch l.Type {
	case "thread.started":
		return Event{SessionID: l.ThreadID, Action: "session started"}, nil
	case "turn.started":
		return Event{Action: "turn started"}, nil
	case "turn.completed":
		e := Event{Final: true, Action: "finished"}
		if u := l.Usage; u != nil {
			// input_tokens include the cached ones; exec --json names no
			// model, so Codex runs are counted in tokens only.
			e.Usage = &usage.Usage{Models: []usage.ModelUsage{{Tokens: usage.Tokens{
				Input: max(u.InputTokens-u.CachedInputTokens, 0), Output: u.OutputTokens,
				CacheRead: u.CachedInputTokens, CacheWrite: u.CacheWriteTokens}}}}
		}
		return e, nil
	case "turn.failed":
		return Event{Final: true, Action: "failed", Error: oneLine(cmp.Or(l.Error.Message, "turn failed"), 300)}, nil
	case "error":
		// A stream error; turn.failed follows when the turn is lost.
		return Event{Action: "error: " + firstLine(l.Message)}, nil
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			return Event{}, nil
		}
		return codexItemEvent(l.Type, *l.Item), nil
	}
	return Event{}, nil
}

func codexItemEvent(typ string, it codexItem) Event {
	switch it.Type {
	case "agent_message":
		if typ != "item.completed" {
			return Event{}
		}
		t := strings.TrimSpace(it.Text)
		return Event{Text: t, Action: "says: " + firstLine(t)}
	case "reasoning":
		return Event{Action: "thinking"}
	case "command_execution":
		act := "$ " + firstLine(it.Command)
		if typ == "item.completed" && it.ExitCode != nil && *it.ExitCode != 0 {
			act += fmt.Sprintf(" (exit %d)", *it.ExitCode)
		}
		return Event{Action: act}
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Path)
		}
		return Event{Action: "edit " + firstLine(strings.Join(paths, ", "))}
	case "mcp_tool_call":
		return Event{Action: "tool " + it.Server + "." + it.Tool}
	case "web_search":
		return Event{Action: "search: " + firstLine(it.Query)}
	case "todo_list":
		done := 0
		for _, t := range it.Items {
			if t.Completed {
				done++
			}
		}
		return Event{Action: fmt.Sprintf("plan: %d/%d done", done, len(it.Items))}
	case "error":
		// Non-fatal notices (unknown model metadata and the like).
		return Event{Action: "notice: " + firstLine(it.Message)}
	}
	return Event{}
}

// firstLine is the first non-empty line of s, cut to 100 runes.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return oneLine(l, 100)
		}
	}
	return ""
}

// oneLine cleans s, collapses whitespace and cuts it to at most n runes.
func oneLine(s string, n int) string { return engine.OneLine(Clean(s), n) }

// Clean strips everything a terminal would act on (escape sequences such as
// title or clipboard writes, control characters other than newline and tab,
// bidirectional overrides) from what an agent, a task title or bd wrote.
func Clean(s string) string {
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return ' '
		case unicode.IsControl(r), r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
}
