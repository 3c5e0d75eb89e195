package transcript

import (
	"bytes"
	"cmp"
	"encoding/json"
)

// Codex log formats CodexLog recognises.
const (
	// FormatRollout: <codex_home>/sessions/…/rollout-*.jsonl, lines
	// {"timestamp","type","payload"}.
	FormatRollout = "rollout"
	// FormatTUILog: the TUI session log (CODEX_TUI_RECORD_SESSION), lines
	// {"ts","dir","kind",…}. Only before Codex 0.117 did it hold the
	// protocol events (kind "codex_event"), task_complete among them.
	FormatTUILog = "tui"
)

// CodexTurn is one task_complete (or turn_complete, its alias) event, with
// the agent's final message.
type CodexTurn struct {
	TurnID           string
	LastAgentMessage string
}

// CodexLog is what a Codex rollout file or TUI session log says, read one
// line at a time from the first (a growing file can be followed): the
// session id and every task_complete in order.
type CodexLog struct {
	Format    string // FormatRollout or FormatTUILog once a line told
	SessionID string
	Completes []CodexTurn
	Ended     bool // the TUI log's session_end record was read
	// Events counts codex_event records (TUI log) or event_msg lines (rollout).
	Lines, Events int
}

// rawCodexLogLine holds both envelopes: type/payload and kind/payload.msg.
type rawCodexLogLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
	Kind    string          `json:"kind"`
}

// Add reads one line (without its newline); others than those it reads
// are only counted.
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
	var ev rawCodexItem
	switch {
	case r.Kind != "": // TUI session log
		l.Format, l.Ended = FormatTUILog, l.Ended || r.Kind == "session_end"
		if r.Kind != "codex_event" {
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
		if r.Type == "session_meta" {
			l.SessionID = cmp.Or(l.SessionID, ev.SessionID, ev.ID)
		}
		if r.Type != "event_msg" {
			return
		}
		l.Events++
	default:
		return
	}
	switch ev.Type {
	case "session_configured":
		l.SessionID = cmp.Or(l.SessionID, ev.SessionID)
	case "task_complete", "turn_complete": // an alias Codex accepts
		l.Completes = append(l.Completes, CodexTurn{TurnID: ev.TurnID, LastAgentMessage: ev.LastAgentMessage})
	}
}

// CodexLogScanner feeds a CodexLog from a byte stream (io.Writer).
type CodexLogScanner struct {
	Log     CodexLog
	partial []byte // a line not ended yet
}

// Write adds the complete lines of p and keeps a partial one for the next
// call. It never fails.
func (s *CodexLogScanner) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n') // only new bytes: a long line is searched once
		if i < 0 {
			s.partial = append(s.partial, p...)
			return n, nil
		}
		s.Log.Add(append(s.partial, p[:i]...)) // Add keeps no byte of it
		s.partial, p = s.partial[:0], p[i+1:]
	}
}

// Flush adds a final line that had no newline (a file that is complete).
func (s *CodexLogScanner) Flush() {
	s.Log.Add(s.partial) // none (empty) is not a line
	s.partial = nil
}
