package transcript

import (
	"encoding/json"
	"strings"
)

// codexKind is what a Codex rollout line means to LastAgentMessage.
type codexKind int

const (
	codexOther     codexKind = iota
	codexTurnStart           // event_msg task_started, or a user message that is not a hook prompt
	codexFinal               // task_complete's last_agent_message, or an assistant message's text
)

type codexLine struct {
	kind codexKind
	text string
}

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

// parseCodex classifies one rollout line (Codex 0.169, and the older
// format without the type/payload envelope).
func parseCodex(line []byte) codexLine {
	var r rawCodexLine
	if json.Unmarshal(line, &r) != nil {
		return codexLine{}
	}
	item := r.Payload
	switch {
	case r.Type == "event_msg" && item != nil:
		switch item.Type {
		case "task_started":
			return codexLine{kind: codexTurnStart}
		case "task_complete", "turn_complete": // Codex reads turn_complete as task_complete
			if strings.TrimSpace(item.LastAgentMessage) != "" {
				return codexLine{kind: codexFinal, text: item.LastAgentMessage}
			}
		}
		return codexLine{}
	case r.Type == "response_item" && item != nil:
	case r.Type == "message" && r.Payload == nil:
		item = &r.rawCodexItem
	default:
		return codexLine{}
	}
	if item.Type != "message" {
		return codexLine{}
	}
	var blocks []block
	if json.Unmarshal(item.Content, &blocks) != nil {
		return codexLine{}
	}
	switch item.Role {
	case "assistant":
		var texts []string
		for _, b := range blocks {
			if b.Type == "output_text" {
				texts = append(texts, b.Text)
			}
		}
		if text := joinText(texts); text != "" {
			return codexLine{kind: codexFinal, text: text}
		}
	case "user":
		for _, b := range blocks {
			if strings.HasPrefix(strings.TrimSpace(b.Text), "<hook_prompt") {
				return codexLine{} // a Stop hook's block reason, fed back in the same turn
			}
		}
		return codexLine{kind: codexTurnStart}
	}
	return codexLine{}
}

// LastAgentMessage returns the final message of the last turn in a Codex
// rollout file: its task_complete's last_agent_message, else the text of
// its last assistant message, never an earlier turn's (the turn starts at
// task_started or a user message that is not a hook prompt). None is ""
// and no error.
func LastAgentMessage(path string) (string, error) {
	return fromFile(path, lastAgentMessage)
}

func lastAgentMessage(walk walker) (string, error) {
	var out string
	err := walk(func(line []byte) bool {
		l := parseCodex(line)
		switch l.kind {
		case codexTurnStart:
			return false
		case codexFinal:
			out = l.text
			return false
		}
		return true
	})
	return out, err
}
