package transcript

import (
	"encoding/json"
	"errors"
	"io"
)

// ErrNoMessages is returned for a Gemini CLI transcript without a message
// record (the older single-document format, or a header only so far).
var ErrNoMessages = errors.New("no message records in the transcript")

// rawGeminiRecord is a Gemini CLI transcript line: message records have a
// type ("user", "gemini"); the header and $set records have none.
type rawGeminiRecord struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Tokens  *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
	} `json:"tokens"`
}

// geminiText is a record's content: a string or an array of {"text"} parts.
func geminiText(raw json.RawMessage) string {
	var c content
	json.Unmarshal(raw, &c)
	if c.blocks == nil {
		return c.str
	}
	texts := make([]string, 0, len(c.blocks))
	for _, p := range c.blocks {
		texts = append(texts, p.Text)
	}
	return joinText(texts)
}

// LastGeminiMessage returns the final message of the current turn in a
// Gemini CLI transcript (0.61): the last "gemini" record's content, never
// back past a "user" record (a turn without model text yet is "", no
// error). A transcript with no message record is ErrNoMessages.
func LastGeminiMessage(path string) (string, error) {
	return fromFile(path, func(r io.ReaderAt, size int64) (string, error) {
		var text string
		var seen bool
		err := walk(r, size, func(line []byte) bool {
			var rec rawGeminiRecord
			if json.Unmarshal(line, &rec) != nil {
				return true // a blank or torn line
			}
			if rec.Type == "gemini" {
				text = geminiText(rec.Content)
			}
			seen = rec.Type == "gemini" || rec.Type == "user"
			return !seen
		})
		if err == nil && !seen {
			err = ErrNoMessages
		}
		return text, err
	})
}
