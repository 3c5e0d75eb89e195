package transcript

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// rawCodexItem holds the fields of a rollout payload (or of an old
// envelope-less line, or of a TUI log's codex_event) that LastAgentMessage,
// a usage read and CodexLog use.
type rawCodexItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	SessionID        string          `json:"session_id"`
	TurnID           string          `json:"turn_id"`
	Msg              *rawCodexItem   `json:"msg"` // TUI: the event sits under msg
	Role             string          `json:"role"`
	Model            string          `json:"model"`
	Content          json.RawMessage `json:"content"`
	LastAgentMessage string          `json:"last_agent_message"`
	Info             *struct {
		Total codexTokenUsage `json:"total_token_usage"`
		Last  codexTokenUsage `json:"last_token_usage"`
	} `json:"info"`
}

type rawCodexLine struct {
	rawCodexItem
	Payload *rawCodexItem `json:"payload"`
}

// parseCodex reads one rollout line (Codex 0.169, and the older format
// without the type/payload envelope): final is task_complete's
// last_agent_message or an assistant message's text; start is set by
// task_started or a user message that is not a hook prompt.
func parseCodex(line []byte) (final string, start bool) {
	var r rawCodexLine
	if json.Unmarshal(line, &r) != nil {
		return "", false
	}
	item := r.Payload
	switch {
	case r.Type == "event_msg" && item != nil:
		switch item.Type {
		case "task_started":
			return "", true
		case "task_complete", "turn_complete": // Codex reads turn_complete as task_complete
			if strings.TrimSpace(item.LastAgentMessage) != "" {
				return item.LastAgentMessage, false
			}
		}
		return "", false
	case r.Type == "response_item" && item != nil:
	case r.Type == "message" && r.Payload == nil:
		item = &r.rawCodexItem
	default:
		return "", false
	}
	var blocks []block
	if item.Type != "message" || json.Unmarshal(item.Content, &blocks) != nil {
		return "", false
	}
	switch item.Role {
	case "assistant":
		var texts []string
		for _, b := range blocks {
			if b.Type == "output_text" {
				texts = append(texts, b.Text)
			}
		}
		return joinText(texts), false
	case "user":
		hook := slices.ContainsFunc(blocks, func(b block) bool {
			return strings.HasPrefix(strings.TrimSpace(b.Text), "<hook_prompt")
		})
		return "", !hook // a Stop hook's block reason is fed back in the same turn
	}
	return "", false
}

// LastAgentMessage returns the final message of the last turn in a Codex
// rollout file: its task_complete's last_agent_message, else the text of
// its last assistant message, never an earlier turn's (the turn starts at
// task_started or a user message that is not a hook prompt). None is ""
// and no error.
func LastAgentMessage(path string) (string, error) {
	return fromFile(path, lastAgentMessage)
}

func lastAgentMessage(r io.ReaderAt, size int64) (string, error) {
	var out string
	err := walk(r, size, func(line []byte) bool {
		final, start := parseCodex(line)
		out = final
		return final == "" && !start
	})
	return out, err
}
