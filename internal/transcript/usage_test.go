package transcript

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/usage"
)

// Tokens is one model's usage as the tests state it.
type Tokens struct {
	Model                                string
	Input, Output, CacheRead, CacheWrite int64
}

// models lists u's sums by model as Tokens.
func models(u usage.Usage) []Tokens {
	var out []Tokens
	for _, m := range u.Models {
		out = append(out, Tokens{m.Model, m.Input, m.Output, m.CacheRead, m.CacheWrite})
	}
	return out
}

// messages counts the responses summed (those since the previous stop).
func messages(u usage.Usage) int {
	n := 0
	for _, e := range u.Entries {
		if !e.Earlier {
			n++
		}
	}
	return n
}

// readerOf reads a whole transcript backwards with r, as a first stop does.
func readerOf(r UsageReader) func(string) (usage.Usage, error) {
	return func(path string) (usage.Usage, error) {
		u, _, err := r.Read(path, usage.UsageMark{})
		return u, err
	}
}

var (
	readClaude = readerOf(ClaudeUsageReader)
	readCodex  = readerOf(CodexUsageReader)
	readGemini = readerOf(GeminiUsageReader)
)

// upTo writes the part of a fixture up to and including the last line that
// contains marker (the transcript as it stood at one stop) to a temp file.
func upTo(t *testing.T, fixture, marker string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "usage", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if marker != "" {
		i := bytes.LastIndex(data, []byte(marker))
		if i < 0 {
			t.Fatalf("%s: no %q", fixture, marker)
		}
		end := bytes.IndexByte(data[i:], '\n')
		data = data[:i+end+1]
	}
	path := filepath.Join(t.TempDir(), fixture)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The fake API's usage for response n (e2e.UsageFor): input 100+n, output
// 10n+3, cache read 1000n, cache write 7n. Codex reports input with the
// cached tokens included and no cache writes.
func TestUsageRecordedTranscripts(t *testing.T) {
	tests := []struct {
		name    string
		read    func(string) (usage.Usage, error)
		fixture string
		marker  string // the transcript at the stop ends with this line
		want    Tokens
		msgs    int
	}{
		// Stop 1: response 1 (the false promise).
		{"claude stop 1", readClaude, "claude-2.1.330.jsonl", `"id":"msg_fake0001"`,
			Tokens{Model: "claude-opus-5-5", Input: 101, Output: 13, CacheRead: 1000, CacheWrite: 7}, 1},
		// Stop 2: responses 2 (bd close, two content lines) and 3.
		{"claude stop 2", readClaude, "claude-2.1.330.jsonl", `"id":"msg_fake0003"`,
			Tokens{Model: "claude-opus-5-5", Input: 102 + 103, Output: 23 + 33, CacheRead: 5000, CacheWrite: 14 + 21}, 2},
		// Stop 3: responses 4 and 5, the whole file (the lines after it are not messages).
		{"claude stop 3", readClaude, "claude-2.1.330.jsonl", "",
			Tokens{Model: "claude-opus-5-5", Input: 104 + 105, Output: 43 + 53, CacheRead: 9000, CacheWrite: 28 + 35}, 2},
		{"codex stop 1", readCodex, "codex-0.169.0.jsonl", `"total_token_usage":{"input_tokens":1101`,
			Tokens{Model: "fake-model", Input: 101, Output: 13, CacheRead: 1000}, 1},
		{"codex stop 2", readCodex, "codex-0.169.0.jsonl", `"total_token_usage":{"input_tokens":6306`,
			Tokens{Model: "fake-model", Input: 102 + 103, Output: 23 + 33, CacheRead: 5000}, 2},
		{"codex stop 3", readCodex, "codex-0.169.0.jsonl", "",
			Tokens{Model: "fake-model", Input: 104 + 105, Output: 43 + 53, CacheRead: 9000}, 2},
		// Gemini reports thinking apart (thoughts, billed as output) and its
		// input with the cached tokens; a tool's result is a user record
		// (not a stop), a message that called tools is written twice.
		{"gemini stop 1", readGemini, "gemini-0.61.0.jsonl", `"total":1114}`,
			Tokens{Model: "gemini-2.5-flash", Input: 101, Output: 13, CacheRead: 1000}, 1},
		{"gemini stop 2", readGemini, "gemini-0.61.0.jsonl", `"total":3136}`,
			Tokens{Model: "gemini-2.5-flash", Input: 102 + 103, Output: 23 + 33, CacheRead: 5000}, 2},
		{"gemini stop 3", readGemini, "gemini-0.61.0.jsonl", "",
			Tokens{Model: "gemini-2.5-flash", Input: 104 + 105, Output: 43 + 53, CacheRead: 9000}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := tt.read(upTo(t, tt.fixture, tt.marker))
			if err != nil {
				t.Fatal(err)
			}
			if len(u.Models) != 1 || models(u)[0] != tt.want || messages(u) != tt.msgs || u.Partial {
				t.Errorf("usage = %+v, want one model %+v over %d messages", u, tt.want, tt.msgs)
			}
			// The shipped prices cover what the pinned clients send (Codex's is a fake model).
			if s := usage.Spend(nil, u); tt.want.Model != "fake-model" && (s.Unpriced != 0 || s.Cost <= 0) {
				t.Errorf("%s not priced by the shipped table: %+v", tt.want.Model, s)
			}
		})
	}
}

// The whole recorded runs sum to what the clients themselves reported at
// the end (Claude's result event and cost-state line, Codex's
// turn.completed, Gemini's result stats): 515 input, 165 output, 15000
// cache read, 105 cache write. Gemini's result counts 150 output tokens:
// the 15 thinking tokens apart.
func TestUsageStopsSumToTheRun(t *testing.T) {
	for _, tc := range []struct {
		read    func(string) (usage.Usage, error)
		fixture string
		markers []string
		want    Tokens
	}{
		{readClaude, "claude-2.1.330.jsonl", []string{`"id":"msg_fake0001"`, `"id":"msg_fake0003"`, ""},
			Tokens{Input: 515, Output: 165, CacheRead: 15000, CacheWrite: 105}},
		{readCodex, "codex-0.169.0.jsonl", []string{`"total_token_usage":{"input_tokens":1101`, `"total_token_usage":{"input_tokens":6306`, ""},
			Tokens{Input: 15515 - 15000, Output: 165, CacheRead: 15000}},
		{readGemini, "gemini-0.61.0.jsonl", []string{`"total":1114}`, `"total":3136}`, ""},
			Tokens{Input: 515, Output: 150 + 15, CacheRead: 15000}},
	} {
		var sum Tokens
		for _, m := range tc.markers {
			u, err := tc.read(upTo(t, tc.fixture, m))
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range u.Models {
				sum.Input += x.Input
				sum.Output += x.Output
				sum.CacheRead += x.CacheRead
				sum.CacheWrite += x.CacheWrite
			}
		}
		if sum != tc.want {
			t.Errorf("%s: the stops sum to %+v, the client reported %+v", tc.fixture, sum, tc.want)
		}
	}
}

// The recorded run with response 4 (the tool call, written twice) made by
// another model: a sum per model, the latest first, each message once.
func TestUsageGeminiByModel(t *testing.T) {
	u, err := readGemini(upTo(t, "gemini-0.61.0-two-models.jsonl", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := []Tokens{
		{Model: "gemini-2.5-flash", Input: 105, Output: 53, CacheRead: 5000},
		{Model: "gemini-2.5-pro", Input: 104, Output: 43, CacheRead: 4000},
	}
	if len(u.Models) != 2 || models(u)[0] != want[0] || models(u)[1] != want[1] || messages(u) != 2 {
		t.Errorf("usage = %+v, want %+v over 2 messages", u, want)
	}
}

// A turn longer than the lookback gives a partial sum, after reading no
// more than the cap.
func TestUsageLookbackCap(t *testing.T) {
	old := UsageLookback
	UsageLookback = 4096
	t.Cleanup(func() { UsageLookback = old })
	var b strings.Builder
	b.WriteString(`{"type":"user","message":{"role":"user","content":"go"}}` + "\n")
	for i := range 200 {
		b.WriteString(`{"type":"assistant","message":{"id":"m` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `","model":"m","usage":{"input_tokens":1,"output_tokens":1}}}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := readClaude(path)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Partial || messages(u) == 0 {
		t.Errorf("usage = %+v, want a partial sum", u)
	}
	UsageLookback = old
	if u, _ := readClaude(path); u.Partial {
		t.Errorf("with the default cap the prompt is reached: %+v", u)
	}
}

func TestUsageEmptyAndMissing(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	for _, path := range []string{empty, filepath.Join(t.TempDir(), "missing.jsonl")} {
		if _, err := readClaude(path); err == nil {
			t.Errorf("%s: no error", path)
		}
	}
}

// holeReader is a huge transcript of NUL bytes (a hole: no newline)
// whose last bytes are a tail of lines; it counts the bytes read.
type holeReader struct {
	size int64
	tail []byte
	read int64
}

func (c *holeReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off+int64(n) < c.size {
		pos := off + int64(n)
		if t := pos - (c.size - int64(len(c.tail))); t >= 0 {
			p[n] = c.tail[t]
		} else {
			p[n] = 0
		}
		n++
	}
	c.read += int64(n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// However large the transcript and whatever it holds before the tail (a
// 1 TiB hole without a newline), a usage read reads no more than
// UsageLookback and a little: the stop's cost is flat.
func TestUsageReadIsBounded(t *testing.T) {
	tail := []byte("\n" + `{"type":"assistant","message":{"id":"m1","model":"m","usage":{"input_tokens":3,"output_tokens":4}}}` + "\n")
	for _, read := range []UsageReader{ClaudeUsageReader, CodexUsageReader, GeminiUsageReader} {
		r := &holeReader{size: 1 << 40, tail: tail}
		u, _, err := usageFrom(r, r.size, usage.UsageMark{}, read)
		if err != nil {
			t.Fatal(err)
		}
		if !u.Partial {
			t.Errorf("no boundary within the window: want a partial sum, got %+v", u)
		}
		if r.read > UsageLookback+1<<20 {
			t.Errorf("read %d bytes of a 1 TiB transcript; the cap is %d", r.read, UsageLookback)
		}
	}
	r := &holeReader{size: 1 << 40, tail: tail}
	if u, _, _ := usageFrom(r, r.size, usage.UsageMark{}, ClaudeUsageReader); len(u.Models) != 1 || u.Models[0].Input != 3 {
		t.Errorf("the tail's response: %+v", u)
	}
}

// Read on from a mark, a stop reads only what was written since: on a
// 1 TiB transcript, the bytes after the mark and nothing before.
func TestUsageReadOnFromMarkReadsOnlyTheNewBytes(t *testing.T) {
	tail := []byte("\n" + `{"type":"assistant","message":{"id":"m1","model":"m","usage":{"input_tokens":3,"output_tokens":4}}}` + "\n")
	r := &holeReader{size: 1 << 40, tail: tail}
	from := usage.UsageMark{Offset: r.size - int64(len(tail)) + 1}
	u, mark, err := usageFrom(r, r.size, from, ClaudeUsageReader)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Models) != 1 || u.Models[0].Input != 3 || u.Partial {
		t.Errorf("usage after the mark = %+v, want the one response, whole", u)
	}
	if r.read != int64(len(tail))-1 || mark.Offset != r.size {
		t.Errorf("read %d bytes, mark %d; want the %d new bytes and the file's end", r.read, mark.Offset, len(tail)-1)
	}
}

// A transcript rewritten since the mark (truncated and grown past it, or
// replaced by a longer file) is read backwards, not from the middle of a
// line.
func TestUsageMarkOfARewrittenTranscript(t *testing.T) {
	line := `{"type":"assistant","message":{"id":"m%d","model":"m","usage":{"input_tokens":%d,"output_tokens":1}}}` + "\n"
	var b strings.Builder
	b.WriteString(`{"type":"user","message":{"role":"user","content":"go"}}` + "\n")
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&b, line, i, i)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(path, []byte(b.String()), 0o644)
	_, mark, err := UsageReader(ClaudeUsageReader).Read(path, usage.UsageMark{})
	if err != nil || mark.Offset != int64(b.Len()) {
		t.Fatalf("first read: mark %+v, %v", mark, err)
	}
	// Replaced by a longer file whose byte before the mark is not a newline.
	var c strings.Builder
	c.WriteString(`{"type":"user","message":{"role":"user","content":"again, with a longer prompt"}}` + "\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&c, line, 10+i, 10)
	}
	os.WriteFile(path, []byte(c.String()), 0o644)
	u, _, err := UsageReader(ClaudeUsageReader).Read(path, mark)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Models) != 1 || u.Models[0].Input != 40 || messages(u) != 4 {
		t.Errorf("usage = %+v; want the new file's four responses, read backwards", u)
	}
}
