package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrNoMessages is returned for a Gemini CLI transcript holding no message
// record at all (a session file of the older single-document format, or
// one that only has its header so far).
var ErrNoMessages = errors.New("no message records in the transcript")

// rawGeminiRecord is the part of a Gemini CLI transcript line the reader
// uses: message records are {"id","timestamp","type":"user"|"gemini",
// "content",…}; the header ({"sessionId",…}) and update records
// ({"$set":…}) have no type.
type rawGeminiRecord struct {
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
}

// geminiText is a record's content: a string (model records) or an array
// of parts ({"text":…}; user records).
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
// Gemini CLI transcript (JSON lines, Gemini CLI 0.61): the content of the
// last "type":"gemini" record. A model message that called tools is written
// twice with the same id; the later line is the one read. The search never
// goes back past a "user" record: a turn whose model text is not written
// yet gives "" and no error, never an earlier turn's text. Header, $set,
// info, error and warning lines are skipped. A transcript with no message
// record at all is ErrNoMessages.
func LastGeminiMessage(path string) (string, error) {
	return fromFile(path, lastGeminiMessage)
}

func lastGeminiMessage(walk walker) (string, error) {
	var text string
	var seen bool
	err := walk(func(line []byte) bool {
		if len(bytes.TrimSpace(line)) == 0 {
			return true
		}
		var r rawGeminiRecord
		if json.Unmarshal(line, &r) != nil {
			return true // a torn last line
		}
		switch r.Type {
		case "gemini":
			seen = true
			text = geminiText(r.Content)
			return false
		case "user":
			seen = true
			return false
		}
		return true
	})
	if err == nil && !seen {
		err = ErrNoMessages
	}
	return text, err
}
