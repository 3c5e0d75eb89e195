// Package hook adapts each agent's hook protocol (Claude Code, Codex,
// Gemini CLI, Cursor) to the engine: it decodes the JSON an agent sends on
// stdin and encodes the decision in the shape that agent accepts.
package hook

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/transcript"
	"github.com/runtasks/runtasks/internal/usage"
)

// Agents runtasks speaks to.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
	Cursor = "cursor"
)

// MaxInput bounds what is read from stdin (the transcript is read from its file).
const MaxInput = 16 << 20

// Payload is a hook's stdin, the union of the fields the agents send.
type Payload struct {
	SessionID            string  `json:"session_id"`
	TranscriptPath       string  `json:"transcript_path"`
	CWD                  string  `json:"cwd"`
	HookEventName        string  `json:"hook_event_name"`
	LastAssistantMessage *string `json:"last_assistant_message"`
	AgentID              string  `json:"agent_id"`
	TurnID               string  `json:"turn_id"`
	Model                string  `json:"model"`
	Prompt               string  `json:"prompt"`
	Source               string  `json:"source"`
	BackgroundTasks      []struct {
		Status string `json:"status"`
	} `json:"background_tasks"` // Claude Code 2.1.145+
	PromptResponse *string `json:"prompt_response"` // Gemini CLI (AfterAgent): the final text
	// Cursor: the conversation is the session; loop_count counts the
	// follow-ups the stop hook already caused.
	ConversationID string `json:"conversation_id"`
	LoopCount      *int   `json:"loop_count"`
	CursorVersion  string `json:"cursor_version"`
	ToolInput      struct {
		Command any `json:"command"` // a shell tool's command line (PreToolUse, BeforeTool)
	} `json:"tool_input"`
}

func Parse(r io.Reader) (Payload, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return Payload{}, fmt.Errorf("read hook input: %w", err)
	}
	if len(data) > MaxInput {
		return Payload{}, fmt.Errorf("hook input larger than %d bytes", MaxInput)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Payload{}, errors.New("empty hook input")
	}
	var p Payload
	if err := json.Unmarshal(data, &p); err != nil {
		return Payload{}, fmt.Errorf("hook input is not a JSON object: %w", err)
	}
	if strings.ContainsRune(p.SessionID, 0) {
		return Payload{}, errors.New("hook input: session_id contains NUL")
	}
	return p, nil
}

// Detect names the agent that sent p: Gemini CLI's and Cursor's events and
// fields are unambiguous; Codex sends turn_id and model with every Stop,
// Claude Code neither (and is the default).
func Detect(p Payload) string {
	switch p.HookEventName {
	case "AfterAgent", "BeforeAgent", "BeforeTool":
		return Gemini
	case "stop", "sessionStart", "beforeSubmitPrompt", "subagentStop":
		return Cursor
	}
	switch {
	case p.ConversationID != "" || p.CursorVersion != "" || p.LoopCount != nil:
		return Cursor
	case p.PromptResponse != nil:
		return Gemini
	case p.TurnID != "" && p.Model != "":
		return Codex
	}
	return Claude
}

// Input converts p into the engine's input. The final message is
// last_assistant_message when sent, else read from the transcript's end.
// readErrors asks for the tool-error flag (one more read of the tail).
func Input(agent string, p Payload, readErrors bool) (engine.Input, error) {
	in := engine.Input{Agent: agent, Event: p.HookEventName, SessionID: p.SessionID, TranscriptPath: p.TranscriptPath,
		Subagent: p.HookEventName == "SubagentStop" || p.AgentID != ""}
	for _, t := range p.BackgroundTasks {
		if t.Status == "" || t.Status == "running" || t.Status == "pending" {
			in.BackgroundTasks++
		}
	}
	if agent == Cursor {
		in.SessionID = cmp.Or(in.SessionID, p.ConversationID)
	}
	var err error
	switch {
	case p.LastAssistantMessage != nil:
		in.FinalMessage = *p.LastAssistantMessage
	case agent == Gemini && p.TranscriptPath != "":
		// Gemini CLI's final message is the transcript's last model record:
		// prompt_response joins every model text since the prompt (an earlier
		// turn's promise included), so it stands in only for a missing transcript.
		in.FinalMessage, err = transcript.LastGeminiMessage(p.TranscriptPath)
		if err != nil && p.PromptResponse != nil &&
			(errors.Is(err, fs.ErrNotExist) || errors.Is(err, transcript.ErrEmpty) || errors.Is(err, transcript.ErrNoMessages)) {
			in.FinalMessage, err = *p.PromptResponse, nil
		}
	case p.PromptResponse != nil:
		in.FinalMessage = *p.PromptResponse
	case p.TranscriptPath == "":
	case agent == Codex:
		in.FinalMessage, err = transcript.LastAgentMessage(p.TranscriptPath)
	case agent == Claude:
		in.FinalMessage, err = transcript.LastAssistantText(p.TranscriptPath)
	}
	// Cursor's transcript has no documented shape: it is not read, and its
	// stop payload carries no final message.
	if err != nil {
		err = fmt.Errorf("final message: %w", err)
	}
	if readErrors && p.TranscriptPath != "" && agent == Claude {
		in.ToolErrors, _ = transcript.ToolErrors(p.TranscriptPath)
	}
	return in, err
}

// usageReaders read the agents' transcripts (Cursor's has no documented shape).
var usageReaders = map[string]transcript.UsageReader{
	Claude: transcript.ClaudeUsageReader,
	Codex:  transcript.CodexUsageReader,
	Gemini: transcript.GeminiUsageReader,
}

// Usage reads what was used since the previous stop from the agent's
// transcript (UsageReader.Read); Cursor's is zero.
func Usage(agent string, p Payload, from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
	r, ok := usageReaders[agent]
	if p.TranscriptPath == "" || !ok {
		return usage.Usage{}, usage.UsageMark{}, nil
	}
	u, mark, err := r.Read(p.TranscriptPath, from)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, transcript.ErrEmpty):
		// Nothing written yet: the next stop counts what is written by then.
		return usage.Usage{Transcript: true}, usage.UsageMark{Path: p.TranscriptPath}, nil
	case err != nil:
		return usage.Usage{}, from, fmt.Errorf("usage: %w", err)
	}
	return u, mark, nil
}
