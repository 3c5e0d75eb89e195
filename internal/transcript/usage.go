package transcript

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/runtasks/runtasks/internal/usage"
)

// record adds one response to u's entries, and to its sums unless earlier.
func record(u *usage.Usage, id, model string, t usage.Tokens, earlier bool) {
	u.Entries = append(u.Entries, usage.UsageEntry{ID: id, Model: model, Tokens: t, Earlier: earlier})
	if !earlier {
		u.Add(model, t)
	}
}

// UsageLookback caps the bytes a usage read reads back from the end, so a
// stop's cost stays flat; longer turns give a Partial sum.
var UsageLookback int64 = 8 << 20

// UsageMaxLine is the longest line a usage read buffers (a huge tool input
// is skipped): usage lines are small, and Claude Code repeats a message's
// usage on each of its content-block lines.
var UsageMaxLine = 1 << 20

// usageWalk calls fn with lines from the last to the first until fn
// returns false or UsageLookback is spent; capped says it was.
type usageWalk func(fn func(line []byte) bool) (capped bool)

// UsageReader reads one client's usage from a walk. In a region (the bytes
// after a mark) every response is new and model is the one in use at its
// start. It returns the usage and the model in use at the end.
type UsageReader func(walk usageWalk, region bool, model string) (usage.Usage, string)

// Read reads the usage of the responses written after from (the previous
// stop's mark; without a valid one, the turns since the previous stop,
// read backwards) and returns the mark to keep, within UsageLookback.
func (r UsageReader) Read(path string, from usage.UsageMark) (usage.Usage, usage.UsageMark, error) {
	var mark usage.UsageMark
	u, err := fromFile(path, func(f io.ReaderAt, size int64) (u usage.Usage, err error) {
		if from.Path != path || from.Offset > size || (from.Offset > 0 && !lineEndAt(f, from.Offset-1)) {
			from = usage.UsageMark{} // not the transcript marked (another, rewritten, or replaced)
		}
		u, mark, err = usageFrom(f, size, from, r)
		return u, err
	})
	if err != nil {
		return usage.Usage{}, from, err
	}
	mark.Path = path
	return u, mark, nil
}

// lineEndAt reports whether r holds a newline at off (a mark follows one).
func lineEndAt(r io.ReaderAt, off int64) bool {
	var b [1]byte
	n, _ := r.ReadAt(b[:], off)
	return n == 1 && b[0] == '\n'
}

// usageFrom reads the usage in r (size bytes) after from, within the last
// UsageLookback bytes (a line cut by their start is not JSON: skipped).
func usageFrom(r io.ReaderAt, size int64, from usage.UsageMark, format UsageReader) (usage.Usage, usage.UsageMark, error) {
	start := max(size-UsageLookback, from.Offset, 0)
	end := size // the end of the last whole line, once scanned
	var scanErr error
	u, model := format(func(fn func(line []byte) bool) bool {
		s := NewReverseScanner(io.NewSectionReader(r, start, size-start), size-start, UsageMaxLine)
		defer func() { scanErr = s.Err() }()
		for s.Scan() {
			if s.Partial() { // still being written: the next read has it whole
				end = start + s.Offset()
				continue
			}
			if !fn(s.Bytes()) {
				return false
			}
		}
		return start > from.Offset
	}, from.Offset > 0, from.Model)
	u.Transcript = true
	return u, usage.UsageMark{Offset: end, Model: cmp.Or(model, from.Model)}, scanErr
}

// sumTurns sums the responses entry finds back to the last turn boundary
// it finds (none in a region) and lists those back to the one before as
// Earlier. A response whose id was met already counts once.
func sumTurns(walk usageWalk, region bool, entry func(line []byte) (e *usage.UsageEntry, boundary bool)) (usage.Usage, string) {
	var u usage.Usage
	seen := map[string]bool{}
	boundaries := 0
	capped := walk(func(line []byte) bool {
		e, boundary := entry(line)
		switch {
		case e != nil && (e.ID == "" || !seen[e.ID]):
			seen[e.ID] = true
			record(&u, e.ID, e.Model, e.Tokens, boundaries > 0)
		case boundary && !region:
			boundaries++
			return boundaries < 2
		}
		return true
	})
	u.Partial = capped && boundaries == 0
	return u, ""
}

// ClaudeUsageReader sums message.usage since the previous stop: back to the last
// "Stop hook feedback" line (a blocked stop), real prompt or compaction. A
// message's usage, repeated on each of its content-block lines, counts
// once (by message.id); subagent lines count but end no search.
func ClaudeUsageReader(walk usageWalk, region bool, _ string) (usage.Usage, string) {
	return sumTurns(walk, region, func(line []byte) (*usage.UsageEntry, bool) {
		// Skip unparsed what is neither usage nor a possible boundary; a
		// tool result is a user line but no boundary: most of a turn's bytes.
		if !bytes.Contains(line, []byte(`"usage"`)) && (bytes.Contains(line, []byte(`"tool_result"`)) ||
			!bytes.Contains(line, []byte(`"user"`)) && !bytes.Contains(line, []byte(`compact_boundary`))) {
			return nil, false
		}
		l := parseClaude(line)
		if l.usage != nil {
			return &usage.UsageEntry{ID: l.id, Model: l.model, Tokens: *l.usage}, false
		}
		return nil, !l.sidechain && (l.kind == kindBoundary || l.feedback)
	})
}

type codexTokenUsage struct {
	InputTokens      int64 `json:"input_tokens"`
	CachedInputToken int64 `json:"cached_input_tokens"`
	CacheWriteTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// CodexUsageReader sums the token_count events (last_token_usage) since the
// previous stop: back to the last user message (a prompt, or a Stop hook's
// <hook_prompt>) or task_started. One repeating the cumulative total of the
// one after it is a repeat; input_tokens include the cached ones. The model
// is the latest turn_context's (read further back when needed).
func CodexUsageReader(walk usageWalk, region bool, regionModel string) (usage.Usage, string) {
	var (
		u          usage.Usage
		entries    []usage.UsageEntry // the model is known at the end
		model      string
		boundaries int
		later      *codexTokenUsage // the cumulative total of the count read before (later in the file)
	)
	capped := walk(func(line []byte) bool {
		if boundaries >= 2 { // only the model is still wanted
			if !bytes.Contains(line, []byte(`"turn_context"`)) {
				return true
			}
		} else if !bytes.Contains(line, []byte(`"token_count"`)) && !bytes.Contains(line, []byte(`"turn_context"`)) &&
			!bytes.Contains(line, []byte(`"task_started"`)) && !bytes.Contains(line, []byte(`"user"`)) {
			return true
		}
		var r rawCodexLine
		if json.Unmarshal(line, &r) != nil || r.Payload == nil {
			return true
		}
		p := r.Payload
		switch {
		case r.Type == "turn_context":
			model = cmp.Or(model, p.Model)
			return boundaries < 2 || model == ""
		case boundaries >= 2:
		case r.Type == "event_msg" && p.Type == "token_count" && p.Info != nil:
			if later != nil && p.Info.Total == *later {
				return true // a repeat of the count after it
			}
			later = &p.Info.Total
			l := p.Info.Last
			entries = append(entries, usage.UsageEntry{ID: strconv.FormatInt(p.Info.Total.TotalTokens, 10), Tokens: usage.Tokens{
				Input: max(l.InputTokens-l.CachedInputToken, 0), Output: l.OutputTokens,
				CacheRead: l.CachedInputToken, CacheWrite: l.CacheWriteTokens}, Earlier: boundaries > 0})
		case region:
		case r.Type == "event_msg" && p.Type == "task_started",
			r.Type == "response_item" && p.Type == "message" && p.Role == "user" && !codexContext(p.Content):
			boundaries++
		}
		return true
	})
	model = cmp.Or(model, regionModel) // a region without a turn start: the model of the turn it is in
	for _, e := range entries {
		record(&u, e.ID, model, e.Tokens, e.Earlier)
	}
	u.Partial = capped && boundaries == 0
	return u, model
}

// codexContext reports whether a user message is context Codex adds at a
// turn's start, not a prompt.
func codexContext(raw json.RawMessage) bool {
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil || len(blocks) == 0 {
		return false
	}
	t := strings.TrimSpace(blocks[0].Text)
	return strings.HasPrefix(t, "<environment_context>") || strings.HasPrefix(t, "<user_instructions>") ||
		strings.HasPrefix(t, "# AGENTS.md")
}

// GeminiUsageReader sums the "gemini" records' tokens since the previous stop:
// back to the last "user" record (the prompt, or an AfterAgent block
// reason); a tool's result (functionResponse parts) is a user record but
// no boundary. A message written twice counts once. tokens.input includes
// tokens.cached; thoughts are billed as output, tool as input.
func GeminiUsageReader(walk usageWalk, region bool, _ string) (usage.Usage, string) {
	return sumTurns(walk, region, func(line []byte) (*usage.UsageEntry, bool) {
		if !bytes.Contains(line, []byte(`"type"`)) {
			return nil, false
		}
		// A tool's result: most of a turn's bytes (model records that called
		// tools hold it too, with their tokens).
		toolResult := bytes.Contains(line, []byte(`"functionResponse"`))
		if toolResult && !bytes.Contains(line, []byte(`"tokens"`)) {
			return nil, false
		}
		var r rawGeminiRecord
		if json.Unmarshal(line, &r) != nil {
			return nil, false
		}
		if t := r.Tokens; r.Type == "gemini" && t != nil {
			return &usage.UsageEntry{ID: r.ID, Model: r.Model, Tokens: usage.Tokens{Input: max(t.Input-t.Cached, 0) + t.Tool,
				Output: t.Output + t.Thoughts, CacheRead: t.Cached}}, false
		}
		return nil, r.Type == "user" && !toolResult
	})
}
