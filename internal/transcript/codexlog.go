package transcript

import (
	"bytes"
	"cmp"
	"encoding/json"
)

// Codex log formats CodexLog recognises.
const (
	// FormatRollout is a rollout file
	// (<codex_home>/sessions/…/rollout-*.jsonl): every line
	// {"timestamp","type","payload"}.
	FormatRollout = "rollout"
	// FormatTUILog is the TUI session log (CODEX_TUI_RECORD_SESSION): every
	// line {"ts","dir","kind",…}. Before Codex 0.117 it held the protocol
	// events as kind "codex_event"; 0.117 and later write UI records only,
	// so such a log never shows a task_complete.
	FormatTUILog = "tui"
)

// CodexTurn is one task_complete event (or turn_complete, its alias): a
// Codex turn that ended, with the agent's final message (empty when Codex
// recorded none).
type CodexTurn struct {
	TurnID           string
	LastAgentMessage string
}

// CodexLog is what a Codex rollout file or TUI session log says about a
// session, read from the first line on: the session id (rollout
// session_meta, TUI session_configured) and every task_complete (or
// turn_complete) in order. Add it one line at a time, so that a growing
// file can be followed.
type CodexLog struct {
	Format    string // FormatRollout or FormatTUILog once a line told
	SessionID string
	Completes []CodexTurn
	Ended     bool // the TUI log's session_end record was read
	// Lines counts the lines added; Events counts codex_event records (TUI
	// log) or event_msg lines (rollout).
	Lines, Events int
}

// rawCodexLogLine holds both envelopes: the rollout's type/payload and the
// TUI log's kind/payload.msg.
type rawCodexLogLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
	Kind    string          `json:"kind"`
}

type rawCodexEvent struct {
	Type             string         `json:"type"`
	ID               string         `json:"id"`
	SessionID        string         `json:"session_id"`
	TurnID           string         `json:"turn_id"`
	LastAgentMessage *string        `json:"last_agent_message"`
	Msg              *rawCodexEvent `json:"msg"` // TUI: the event sits under msg
}

// Add reads one line (without its newline). Lines that are blank, torn or
// of another kind are counted and otherwise ignored.
func (l *CodexLog) Add(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	l.Lines++
	var r rawCodexLogLine
	if json.Unmarshal(line, &r) != nil {
		return
	}
	var ev rawCodexEvent
	switch {
	case r.Kind != "": // TUI session log
		l.Format = FormatTUILog
		switch r.Kind {
		case "session_end":
			l.Ended = true
			return
		case "codex_event":
		default:
			return
		}
		l.Events++
		if json.Unmarshal(r.Payload, &ev) != nil || ev.Msg == nil {
			return
		}
		ev = *ev.Msg
	case r.Type != "" && len(r.Payload) > 0: // rollout
		l.Format = FormatRollout
		if json.Unmarshal(r.Payload, &ev) != nil {
			return
		}
		switch r.Type {
		case "session_meta":
			if l.SessionID == "" {
				l.SessionID = cmp.Or(ev.SessionID, ev.ID)
			}
			return
		case "event_msg":
			l.Events++
		default:
			return
		}
	default:
		return
	}
	switch ev.Type {
	case "session_configured":
		if l.SessionID == "" {
			l.SessionID = ev.SessionID
		}
	case "task_complete", "turn_complete":
		// Codex accepts turn_complete as an alias of task_complete.
		t := CodexTurn{TurnID: ev.TurnID}
		if ev.LastAgentMessage != nil {
			t.LastAgentMessage = *ev.LastAgentMessage
		}
		l.Completes = append(l.Completes, t)
	}
}

// CodexLogScanner feeds a CodexLog from a byte stream (io.Writer).
type CodexLogScanner struct {
	Log     CodexLog
	partial []byte // a line not ended yet
}

// Write adds the complete lines of p and keeps a trailing partial line for
// the next call, so a file being written can be fed as it grows. It never
// fails.
func (s *CodexLogScanner) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	for {
		line, rest, ok := bytes.Cut(s.partial, []byte("\n"))
		if !ok {
			return len(p), nil
		}
		s.Log.Add(line)
		s.partial = rest
	}
}

// Flush adds a final line that had no newline (a file that is complete).
func (s *CodexLogScanner) Flush() {
	if len(s.partial) > 0 {
		s.Log.Add(s.partial)
		s.partial = nil
	}
}
