package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/agentfile"
)

const (
	claudeSession = "8e95f3d7-2c4b-4f7a-b1e9-6d3c0a5f2b18"
	codexSession  = "01a20014-39c4-7960-982b-a6e5b41bfae9"
)

func TestLastAssistantText(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		// 1.0.128: no isMeta on the feedback line; the final message comes
		// after a block and a tool call.
		{"claude-1.0.128.jsonl", "Every task under bd-7 is closed.\n<promise>ALL TASKS COMPLETE</promise>"},
		// The main chain's last message is tool_use only: its text line is
		// used; the subagent's sidechain lines and the tool result are not.
		{"claude-1.0.128-sidechain.jsonl", "Handing bd-7.3 to a subagent."},
		// A feedback line with the tags and the done token follows the real
		// last text: the real text is returned.
		{"claude-2.0.76-feedback.jsonl", "Still working: bd-9.3 remains open."},
		// The last assistant line holds only a tool_use: the text block of
		// the same message is the answer.
		{"claude-2.1.330-tooluse-last.jsonl", "Running a failing command."},
		{"claude-2.1.330-tool-error.jsonl", "The second command failed."},
		// A message written as two text lines after a block; thinking
		// blocks, feedback, attachment and system lines are not text.
		{"claude-2.1.330-stop-block.jsonl", "All tasks under bd-a1 are closed.\n<promise>ALL TASKS COMPLETE</promise>"},
		// After a compaction with no new message, nothing from before the
		// boundary (nor the summary) is returned.
		{"claude-2.1.330-compact.jsonl", ""},
		{"claude-2.1.330-compact-resumed.jsonl", "Resuming work on bd-a1.4."},
		{"claude-2.1.330-subagent.jsonl", "Subagent done: hi."},
		// The torn last line is ignored.
		{"claude-2.1.330-torn.jsonl", "Half way: bd-a1.3 is next."},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := LastAssistantText(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("LastAssistantText = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFeedbackNeverCounts checks the self-echo hazard: block reasons in the
// transcript (feedback, attachment, system lines) hold the tags and the
// done token, and none of it reaches the answer.
func TestFeedbackNeverCounts(t *testing.T) {
	for _, file := range []string{"claude-2.0.76-feedback.jsonl", "claude-2.1.330-subagent.jsonl", "claude-2.1.330-compact.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("<promise>ALL TASKS COMPLETE</promise>")) || !bytes.Contains(data, []byte("TASKMASTER_DONE::")) {
			t.Fatalf("%s: fixture lacks the tags it must hide", file)
		}
		got, err := LastAssistantText(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got, "promise") || strings.Contains(got, "TASKMASTER_DONE") {
			t.Errorf("%s: LastAssistantText = %q picked up hook feedback", file, got)
		}
	}
}

func TestToolErrors(t *testing.T) {
	tests := []struct {
		file string
		want bool
	}{
		{"claude-2.1.330-tool-error.jsonl", true},       // the last of two parallel results failed
		{"claude-2.1.330-tool-ok.jsonl", false},         // an earlier failure was fixed
		{"claude-2.1.330-tooluse-last.jsonl", false},    // no result yet in this turn
		{"claude-1.0.128.jsonl", false},                 // results without errors
		{"claude-2.1.330-stop-block.jsonl", false},      // is_error false
		{"claude-1.0.128-sidechain.jsonl", false},       // a result with no is_error key
		{"claude-2.0.76-feedback.jsonl", false},         // no tools at all
		{"claude-2.1.330-compact-resumed.jsonl", false}, // nothing after the boundary
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ToolErrors(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ToolErrors = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLastAgentMessage(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"codex-0.169-complete.jsonl", "Hello! I am the fake model (reply 1) for session " + codexSession + "."},
		// At the second Stop of a blocked turn: no task_complete yet; the
		// escaped tags in the hook prompt are not the agent's.
		{"codex-0.169-stop-block.jsonl", "Done (reply 2).\nTASKMASTER_DONE::" + codexSession},
		{"codex-0.169-hook-prompt-last.jsonl", "Done (reply 1)."},
		{"codex-0.169-blocked-complete.jsonl", "All closed.\n<promise>ALL TASKS COMPLETE</promise>"},
		// A resumed thread whose new turn has no message yet: the previous
		// turn's claim is not returned.
		{"codex-0.169-resume-pending.jsonl", ""},
		// task_complete with a null message: the turn's assistant message.
		{"codex-0.169-null-complete.jsonl", "Only message of the turn."},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := LastAgentMessage(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("LastAgentMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.jsonl")
	readers := map[string]func(string) error{
		"LastAssistantText": func(p string) error { _, err := LastAssistantText(p); return err },
		"ToolErrors":        func(p string) error { _, err := ToolErrors(p); return err },
		"LastAgentMessage":  func(p string) error { _, err := LastAgentMessage(p); return err },
		"LastGeminiMessage": func(p string) error { _, err := LastGeminiMessage(p); return err },
	}
	// Files an agent can put where the transcript should be: read without
	// blocking and refused (agentfile).
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.jsonl")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for name, read := range readers {
		if err := read(empty); !errors.Is(err, ErrEmpty) {
			t.Errorf("%s(empty) = %v, want ErrEmpty", name, err)
		}
		if err := read(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing.jsonl") {
			t.Errorf("%s(missing) = %v, want a not-exist error naming the file", name, err)
		}
		if err := read(dir); err == nil || !strings.Contains(err.Error(), "directory") {
			t.Errorf("%s(dir) = %v, want a directory error", name, err)
		}
		for _, p := range []string{fifo, zero} {
			done := make(chan error, 1)
			go func() { done <- read(p) }()
			select {
			case err := <-done:
				if !errors.Is(err, agentfile.ErrNotRegular) {
					t.Errorf("%s(%s) = %v, want agentfile.ErrNotRegular", name, filepath.Base(p), err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s(%s) blocked", name, filepath.Base(p))
			}
		}
	}
	// Garbage is not an error: there is simply no message.
	junk := filepath.Join(dir, "junk.jsonl")
	if err := os.WriteFile(junk, []byte("not json\n{\"type\":\n\x00\x01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := LastAssistantText(junk); got != "" || err != nil {
		t.Errorf("LastAssistantText(junk) = %q, %v; want \"\", nil", got, err)
	}
	if got, err := LastAgentMessage(junk); got != "" || err != nil {
		t.Errorf("LastAgentMessage(junk) = %q, %v; want \"\", nil", got, err)
	}
	if got, err := LastGeminiMessage(junk); got != "" || !errors.Is(err, ErrNoMessages) {
		t.Errorf("LastGeminiMessage(junk) = %q, %v; want \"\", ErrNoMessages", got, err)
	}
}

// assistantLine renders an assistant line in the 2.1.330 shape.
func assistantLine(id, block string) string {
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":false,"message":{"id":%q,"role":"assistant","model":"claude-opus-5-5","content":[%s],"stop_reason":"end_turn"},"type":"assistant","uuid":"u","sessionId":%q}`, id, block, claudeSession)
}

func textBlock(s string) string { return fmt.Sprintf(`{"type":"text","text":%q}`, s) }

func toolResultLine(content string, isError bool) string {
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":%q,"is_error":%v,"tool_use_id":"toolu_1"}]},"uuid":"u"}`, content, isError)
}

const promptLine = `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"go"},"uuid":"u"}`

func writeLines(t testing.TB, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHugeLines: a 5 MB tool result and a 5 MB assistant text are read
// whole; a line over the 16 MiB cap is skipped without failing, and memory
// stays bounded.
func TestHugeLines(t *testing.T) {
	big := strings.Repeat("0123456789", 5<<20/10)
	t.Run("5 MB tool result", func(t *testing.T) {
		p := writeLines(t, promptLine,
			assistantLine("m1", `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}`),
			toolResultLine(big, true),
			assistantLine("m2", textBlock("after the big result")))
		if got, err := LastAssistantText(p); err != nil || got != "after the big result" {
			t.Errorf("LastAssistantText = %q, %v", got, err)
		}
		if got, err := ToolErrors(p); err != nil || !got {
			t.Errorf("ToolErrors = %v, %v; want true", got, err)
		}
	})
	t.Run("5 MB assistant text", func(t *testing.T) {
		p := writeLines(t, promptLine, assistantLine("m1", textBlock(big)), toolResultLine("x", false))
		if got, err := LastAssistantText(p); err != nil || got != big {
			t.Errorf("LastAssistantText: %d bytes, %v; want the %d-byte text", len(got), err, len(big))
		}
	})
	t.Run("line over the cap", func(t *testing.T) {
		huge := strings.Repeat("x", DefaultMaxLine+1<<20)
		p := writeLines(t, promptLine,
			assistantLine("m1", textBlock("before the huge line")),
			assistantLine("m1", `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}`),
			toolResultLine(huge, true),
			assistantLine("m2", `{"type":"tool_use","id":"toolu_2","name":"Bash","input":{}}`))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := LastAssistantText(p)
		runtime.ReadMemStats(&after)
		if err != nil || got != "before the huge line" {
			t.Errorf("LastAssistantText = %q, %v", got, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 5*DefaultMaxLine/2 {
			t.Errorf("allocated %d MiB reading past a %d MiB line", alloc>>20, len(huge)>>20)
		}
	})
}

// TestLookback: a turn longer than the budget without assistant text
// gives "" rather than a read of the whole file.
func TestLookback(t *testing.T) {
	old := lookback
	lookback = 4 << 10
	t.Cleanup(func() { lookback = old })
	lines := []string{promptLine, assistantLine("m0", textBlock("far back"))}
	for i := range 100 {
		lines = append(lines, assistantLine(fmt.Sprint("m", i+1), `{"type":"tool_use","id":"t","name":"Bash","input":{}}`), toolResultLine("ok", false))
	}
	p := writeLines(t, lines...)
	if got, err := LastAssistantText(p); err != nil || got != "" {
		t.Errorf("past the budget: %q, %v; want \"\"", got, err)
	}
	lookback = old
	if got, err := LastAssistantText(p); err != nil || got != "far back" {
		t.Errorf("within the budget: %q, %v; want %q", got, err, "far back")
	}
}

// TestFlatCost: the bytes read to answer do not grow with the transcript.
func TestFlatCost(t *testing.T) {
	read := func(size int) int64 {
		data := genClaude(size)
		cr := &countingReader{r: bytes.NewReader(data)}
		got, err := lastAssistantText(cr, int64(len(data)))
		if err != nil || got != genFinal {
			t.Fatalf("%d bytes: %q, %v", size, got, err)
		}
		return cr.n
	}
	small, large := read(1<<20), read(32<<20)
	if small != large || large > 2*DefaultChunkSize {
		t.Errorf("read %d bytes of a 1 MiB transcript and %d of a 32 MiB one; want the same, at most two chunks", small, large)
	}
}

const genFinal = "All tasks are closed.\n<promise>ALL TASKS COMPLETE</promise>"

// genClaude builds a 2.1.330-shaped transcript of about size bytes: turns of
// prompt, text + tool_use, tool result, final text.
func genClaude(size int) []byte {
	var b bytes.Buffer
	out := strings.Repeat("output line\n", 40)
	for i := 0; b.Len() < size; i++ {
		id := fmt.Sprintf("msg_%06d", i)
		fmt.Fprintln(&b, promptLine)
		fmt.Fprintln(&b, assistantLine(id, textBlock("Working on task "+fmt.Sprint(i))))
		fmt.Fprintln(&b, assistantLine(id, `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"make test"}}`))
		fmt.Fprintln(&b, toolResultLine(out, i%7 == 0))
		fmt.Fprintln(&b, `{"parentUuid":"p","isSidechain":false,"type":"user","message":{"role":"user","content":"Stop hook feedback:\nkeep going <promise>ALL TASKS COMPLETE</promise>"},"isMeta":true,"uuid":"u"}`)
	}
	fmt.Fprintln(&b, assistantLine("msg_final", textBlock("All tasks are closed.")))
	fmt.Fprintln(&b, assistantLine("msg_final", textBlock("<promise>ALL TASKS COMPLETE</promise>")))
	return b.Bytes()
}

func BenchmarkLastAssistantText(b *testing.B) {
	for _, size := range []int{1 << 20, 100 << 20} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			if size > 1<<20 && testing.Short() {
				b.Skip("100 MB transcript skipped in -short")
			}
			p := filepath.Join(b.TempDir(), "t.jsonl")
			if err := os.WriteFile(p, genClaude(size), 0o600); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				got, err := LastAssistantText(p)
				if err != nil || got != genFinal {
					b.Fatalf("%q, %v", got, err)
				}
			}
		})
	}
}
