// Package hook adapts each agent's hook protocol (Claude Code, Codex) to
// the one decision engine: it decodes the JSON an agent sends on stdin and
// encodes the engine's decision in the shape that agent accepts.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/runtasks/runtasks/orchestrator"
	"github.com/runtasks/runtasks/transcript"
)

// Agents runtasks speaks to.
const (
	Claude = "claude"
	Codex  = "codex"
)

// MaxInput bounds what is read from stdin: hook payloads are small; the
// transcript is read from its file, not from stdin.
const MaxInput = 16 << 20

// Payload is a hook's stdin, the union of the fields the agents send.
type Payload struct {
	SessionID            string           `json:"session_id"`
	TranscriptPath       string           `json:"transcript_path"`
	CWD                  string           `json:"cwd"`
	HookEventName        string           `json:"hook_event_name"`
	StopHookActive       bool             `json:"stop_hook_active"`
	LastAssistantMessage *string          `json:"last_assistant_message"`
	BackgroundTasks      []BackgroundTask `json:"background_tasks"`
	AgentID              string           `json:"agent_id"`
	TurnID               string           `json:"turn_id"`
	Model                string           `json:"model"`
	PermissionMode       string           `json:"permission_mode"`
	Prompt               string           `json:"prompt"`
	Source               string           `json:"source"`
}

// BackgroundTask is one entry of Claude Code's background_tasks (2.1.145+).
type BackgroundTask struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
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

// Detect names the agent that sent p when the shape tells: Codex sends
// turn_id and model with every Stop; Claude Code sends neither.
func Detect(p Payload) string {
	if p.TurnID != "" && p.Model != "" {
		return Codex
	}
	return Claude
}

// Input converts p into the engine's input. The final message is taken from
// last_assistant_message when the agent sent it, else read from the end of
// the transcript (assistant text only). readErrors asks for the tool-error
// flag, which costs one more read of the transcript's tail.
func Input(agent string, p Payload, readErrors bool) (orchestrator.Input, error) {
	in := orchestrator.Input{
		Agent:          agent,
		Event:          p.HookEventName,
		SessionID:      p.SessionID,
		TurnID:         p.TurnID,
		TranscriptPath: p.TranscriptPath,
		CWD:            p.CWD,
		StopHookActive: p.StopHookActive,
		Subagent:       p.HookEventName == "SubagentStop" || p.AgentID != "",
	}
	for _, t := range p.BackgroundTasks {
		if t.Status == "" || t.Status == "running" || t.Status == "pending" {
			in.BackgroundTasks++
		}
	}
	var err error
	switch {
	case p.LastAssistantMessage != nil:
		in.FinalMessage = *p.LastAssistantMessage
	case p.TranscriptPath == "":
	case agent == Codex:
		in.FinalMessage, err = transcript.LastAgentMessage(p.TranscriptPath)
	default:
		in.FinalMessage, err = transcript.LastAssistantText(p.TranscriptPath)
	}
	if err != nil {
		err = fmt.Errorf("final message: %w", err)
	}
	if readErrors && p.TranscriptPath != "" && agent == Claude {
		in.ToolErrors, _ = transcript.ToolErrors(p.TranscriptPath)
	}
	return in, err
}

// StopOutput is the JSON a Stop hook prints. Its keys are the ones both
// Claude Code and Codex accept (Codex rejects any other key).
type StopOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

// EncodeStop renders a stop decision for agent. It returns nil when there
// is nothing to print (an allowed stop with no message).
func EncodeStop(agent string, d orchestrator.Decision) []byte {
	var out StopOutput
	if d.Block {
		out = StopOutput{Decision: "block", Reason: d.Reason}
		if agent != Codex {
			out.SystemMessage = d.SystemMessage
		}
	} else if d.SystemMessage != "" {
		out.SystemMessage = d.SystemMessage
	} else {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil // strings always marshal
	}
	return append(b, '\n')
}
