package hook

import (
	"encoding/json"
	"slices"

	"github.com/runtasks/runtasks/internal/engine"
)

// Agents lists the agents runtasks has adapters for.
var Agents = []string{Claude, Codex, Gemini, Cursor}

func Known(agent string) bool { return slices.Contains(Agents, agent) }

// Events, by runtasks' names for them (Claude Code's; see NativeEvent).
const (
	EventStop         = "Stop"
	EventSubagentStop = "SubagentStop"
	EventPromptSubmit = "UserPromptSubmit"
	EventSessionStart = "SessionStart"
	EventPreTool      = "PreToolUse"
)

// nativeEvents maps runtasks' event names to each agent's.
var nativeEvents = map[string]map[string]string{
	Claude: {EventStop: "Stop", EventSubagentStop: "SubagentStop", EventPromptSubmit: "UserPromptSubmit", EventSessionStart: "SessionStart", EventPreTool: "PreToolUse"},
	Codex:  {EventStop: "Stop", EventSubagentStop: "SubagentStop", EventPromptSubmit: "UserPromptSubmit", EventSessionStart: "SessionStart", EventPreTool: "PreToolUse"},
	// Gemini CLI: AfterAgent ends a turn, BeforeAgent follows a prompt.
	Gemini: {EventStop: "AfterAgent", EventPromptSubmit: "BeforeAgent", EventSessionStart: "SessionStart", EventPreTool: "BeforeTool"},
	// Cursor: camelCase events in hooks.json.
	Cursor: {EventStop: "stop", EventPromptSubmit: "beforeSubmitPrompt", EventSessionStart: "sessionStart"},
}

// NativeEvent is agent's name for event ("" when it has none).
func NativeEvent(agent, event string) string { return nativeEvents[agent][event] }

// CanonicalEvent maps an agent's event name back to runtasks' ("" when unknown).
func CanonicalEvent(agent, native string) string {
	for ev, n := range nativeEvents[agent] {
		if n == native {
			return ev
		}
	}
	return ""
}

// output is every answer a hook prints; an empty field is left out, so
// each encoder fills exactly the keys its agent's protocol takes.
type output struct {
	Decision           string    `json:"decision,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
	FollowupMessage    string    `json:"followup_message,omitempty"`   // Cursor
	AdditionalContext  string    `json:"additional_context,omitempty"` // Cursor
}

type specific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

// EncodeStop renders a stop decision in agent's protocol; nil when there
// is nothing to print. Claude Code: {"decision":"block","reason",
// "systemMessage"}. Codex drops an answer with any key beyond continue,
// decision, reason, stopReason, suppressOutput and systemMessage: a block
// is exactly {"decision":"block","reason"}. Gemini CLI: "deny", the reason
// sent as a new prompt. Cursor: {"followup_message"}, the next user
// message; it has no field for a message to the user.
func EncodeStop(agent string, d engine.Decision) []byte {
	var o output
	switch {
	case agent == Cursor:
		if !d.Block || d.Reason == "" {
			return nil
		}
		o.FollowupMessage = d.Reason
	case d.Block:
		o = output{Decision: "block", Reason: d.Reason}
		if agent == Gemini {
			o.Decision = "deny"
		}
		if agent != Codex {
			o.SystemMessage = d.SystemMessage
		}
	case d.SystemMessage != "":
		o.SystemMessage = d.SystemMessage
	default:
		return nil
	}
	return marshalLine(o)
}

// EncodeMessage renders a message for the person (not the model) from any
// hook: {"systemMessage":…}; nil for Cursor, which has no such field.
func EncodeMessage(agent, msg string) []byte {
	return EncodeStop(agent, engine.Decision{SystemMessage: msg})
}

// EncodeDeny denies a tool call (docs/agents.md): Gemini CLI takes
// {"decision":"deny","reason"}, Claude Code and Codex the hookSpecificOutput
// deny; the reason reaches the model verbatim.
func EncodeDeny(agent, reason string) []byte {
	if agent == Gemini {
		return marshalLine(output{Decision: "deny", Reason: reason})
	}
	return marshalLine(output{HookSpecificOutput: &specific{HookEventName: EventPreTool, PermissionDecision: "deny", PermissionDecisionReason: reason}})
}

// EncodeContextMessage renders context for the model from a SessionStart
// or UserPromptSubmit hook (event: runtasks' name or agent's own), with a
// systemMessage for the person ("" = none); without text, the message
// alone (EncodeMessage). nil when the agent cannot take the context there.
// Claude Code, Codex and Gemini CLI: {"hookSpecificOutput":
// {"hookEventName","additionalContext"},"systemMessage"}; Cursor:
// {"additional_context"} at sessionStart only, without the message (it has
// no field for one).
func EncodeContextMessage(agent, event, text, msg string) []byte {
	if text == "" {
		return EncodeMessage(agent, msg)
	}
	if c := CanonicalEvent(agent, event); c != "" {
		event = c
	}
	native := NativeEvent(agent, event)
	switch {
	case native == "" || (event != EventSessionStart && (agent == Cursor || event != EventPromptSubmit)):
		return nil
	case agent == Cursor:
		return marshalLine(output{AdditionalContext: text})
	}
	return marshalLine(output{HookSpecificOutput: &specific{HookEventName: native, AdditionalContext: text}, SystemMessage: msg})
}

func marshalLine(o output) []byte {
	b, err := json.Marshal(o)
	if err != nil {
		return nil // strings always marshal
	}
	return append(b, '\n')
}

// ShellSession is the agent session whose shell runs this command, from
// what each agent exports to its model's commands: Claude Code's
// CLAUDE_CODE_SESSION_ID (2.1.132+, often empty), else RUNTASKS_SESSION
// under CLAUDECODE=1 (session-hook writes it into CLAUDE_ENV_FILE); Codex's
// CODEX_THREAD_ID or CODEX_SESSION_ID; GEMINI_SESSION_ID. CLAUDECODE=1 or
// GEMINI_CLI=1 alone name the agent only. The zero Shell is a person's.
func ShellSession(getenv func(string) string) engine.Shell {
	for _, v := range []struct{ agent, name string }{
		{Claude, "CLAUDE_CODE_SESSION_ID"}, {Codex, "CODEX_THREAD_ID"}, {Codex, "CODEX_SESSION_ID"}, {Gemini, "GEMINI_SESSION_ID"},
	} {
		if id := getenv(v.name); id != "" {
			return engine.Shell{Agent: v.agent, Session: id, Var: v.name}
		}
	}
	if getenv("CLAUDECODE") == "1" {
		if id := getenv("RUNTASKS_SESSION"); id != "" {
			return engine.Shell{Agent: Claude, Session: id, Var: "RUNTASKS_SESSION"}
		}
		return engine.Shell{Agent: Claude, Var: "CLAUDECODE"}
	}
	if getenv("GEMINI_CLI") == "1" {
		return engine.Shell{Agent: Gemini, Var: "GEMINI_CLI"}
	}
	return engine.Shell{}
}
