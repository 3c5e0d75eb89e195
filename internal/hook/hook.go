// Package hook adapts each agent's hook protocol (Claude Code, Codex,
// Gemini CLI, Cursor) to the one decision engine: it decodes the JSON an
// agent sends on stdin and encodes the engine's decision in the shape that
// agent accepts. See agents.go for the per-agent rules.
package hook

import (
	"bytes"
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

// MaxInput bounds what is read from stdin: hook payloads are small; the
// transcript is read from its file, not from stdin.
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
	// Claude Code 2.1.145+.
	BackgroundTasks []struct {
		Status string `json:"status"`
	} `json:"background_tasks"`

	// Gemini CLI (AfterAgent): the agent's final text.
	PromptResponse *string `json:"prompt_response"`

	// Cursor: the conversation is the session; loop_count counts the
	// follow-ups the stop hook already caused.
	ConversationID string   `json:"conversation_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	LoopCount      *int     `json:"loop_count"`
	CursorVersion  string   `json:"cursor_version"`
}

// ErrEmpty is returned for empty stdin.
var ErrEmpty = errors.New("empty hook input")

// Parse decodes one hook payload from r.
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
		return Payload{}, ErrEmpty
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

// Detect names the agent that sent p when the shape tells: Gemini CLI's
// events (AfterAgent, BeforeAgent) and Cursor's camelCase events or its
// conversation_id are unambiguous; Codex sends turn_id and model with every
// Stop, Claude Code neither. Anything else is taken as Claude Code.
func Detect(p Payload) string {
	switch p.HookEventName {
	case "AfterAgent", "BeforeAgent":
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

// Input converts p into the engine's input. The final message is taken from
// last_assistant_message when the agent sent it, else read from the end of
// the transcript (assistant text only; for Gemini CLI the last model record,
// its prompt_response only when there is no transcript). readErrors asks
// for the tool-error flag, which costs one more read of the transcript's
// tail.
func Input(agent string, p Payload, readErrors bool) (engine.Input, error) {
	in := engine.Input{
		Agent:          agent,
		Event:          p.HookEventName,
		SessionID:      p.SessionID,
		TranscriptPath: p.TranscriptPath,
		CWD:            p.CWD,
		Subagent:       p.HookEventName == "SubagentStop" || p.AgentID != "",
	}
	for _, t := range p.BackgroundTasks {
		if t.Status == "" || t.Status == "running" || t.Status == "pending" {
			in.BackgroundTasks++
		}
	}
	if agent == Cursor {
		if in.SessionID == "" {
			in.SessionID = p.ConversationID
		}
		if in.CWD == "" && len(p.WorkspaceRoots) > 0 {
			in.CWD = p.WorkspaceRoots[0]
		}
	}
	var err error
	switch {
	case p.LastAssistantMessage != nil:
		in.FinalMessage = *p.LastAssistantMessage
	case agent == Gemini && p.TranscriptPath != "":
		in.FinalMessage, err = geminiFinal(p)
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

// geminiFinal is Gemini CLI's final message: the last model record of the
// transcript (transcript.LastGeminiMessage). prompt_response, which joins
// every model text since the user's prompt (an earlier turn's promise
// included), is used only when there is no transcript to read: the file
// does not exist (yet), is empty, or holds no message record (the older
// single-document format).
func geminiFinal(p Payload) (string, error) {
	msg, err := transcript.LastGeminiMessage(p.TranscriptPath)
	if err != nil && p.PromptResponse != nil &&
		(errors.Is(err, fs.ErrNotExist) || errors.Is(err, transcript.ErrEmpty) || errors.Is(err, transcript.ErrNoMessages)) {
		return *p.PromptResponse, nil
	}
	return msg, err
}

// StopOutput is the JSON a Claude Code or Codex Stop hook prints. Its keys
// are the ones both accept (Codex rejects any other key).
type StopOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

// usageReaders read the agents' transcripts: Claude Code's message.usage,
// Codex's token_count events, Gemini CLI's tokens. Cursor's transcript has
// no documented shape.
var usageReaders = map[string]transcript.UsageReader{
	Claude: transcript.ClaudeUsageReader,
	Codex:  transcript.CodexUsageReader,
	Gemini: transcript.GeminiUsageReader,
}

// Usage reads what was used since the previous stop from the agent's
// transcript: the responses written after from (the previous stop's mark
// in the same transcript), else the turns since the previous stop read
// backwards; bounded either way (transcript.UsageLookback). Cursor's is
// zero usage.
func Usage(agent string, p Payload, from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
	r, ok := usageReaders[agent]
	if p.TranscriptPath == "" || !ok {
		return usage.Usage{}, usage.UsageMark{}, nil
	}
	u, mark, err := r.Read(p.TranscriptPath, from)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, transcript.ErrEmpty):
		// Nothing written yet: a client that writes its transcript after
		// the hook ran. The next stop counts what is written by then.
		return usage.Usage{Transcript: true}, usage.UsageMark{Path: p.TranscriptPath}, nil
	case err != nil:
		return usage.Usage{}, from, fmt.Errorf("usage: %w", err)
	}
	return u, mark, nil
}
