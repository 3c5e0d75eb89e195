package headless

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/usage"
)

var update = flag.Bool("update", false, "rewrite golden files")

// replay parses a captured stream the way Run does: line by line into a
// Summary, collecting the actions shown and whether an event ended the run.
func replay(t *testing.T, agent, file string) (sum Summary, actions []string, ended bool) {
	t.Helper()
	parse, err := ParserFor(agent)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev, err := parse(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		sum.Add(ev)
		ended = ended || ev.Final
		if ev.Action != "" {
			actions = append(actions, ev.Action)
		}
	}
	return sum, actions, ended
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestParseStreams(t *testing.T) {
	tests := []struct {
		agent, file string
		session     string
		final       string
		ended       bool
		err         string
		last        string
	}{
		{AgentClaude, "claude-stream.jsonl", "8e95f3d7-5d1c-4a8e-9d0b-3c1f2a4b5c6d",
			"demo-e.2 is done too.\n\n<promise>ALL TASKS COMPLETE</promise>", true, "", "finished"},
		{AgentClaude, "claude-stream-error.jsonl", "1c2d3e4f-5d1c-4a8e-9d0b-3c1f2a4b5c6d",
			"", true, "Reached maximum number of turns (2)", "failed: error_max_turns"},
		{AgentCodex, "codex-exec.jsonl", "01a20014-31a8-79e0-bb01-992a68ddb3dd",
			"Closed demo-e.1; demo-e.2 is next.", true, "", "finished"},
		{AgentCodex, "codex-exec-failed.jsonl", "01a20014-6c85-7a10-9c3e-1f2e3d4c5b6a",
			"", true, "stream disconnected before completion: error sending request for url (http://127.0.0.1:9/v1/responses)", "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			sum, actions, ended := replay(t, tt.agent, tt.file)
			if sum.SessionID != tt.session {
				t.Errorf("session = %q, want %q", sum.SessionID, tt.session)
			}
			if sum.FinalMessage != tt.final {
				t.Errorf("final message = %q, want %q", sum.FinalMessage, tt.final)
			}
			if last := actions[len(actions)-1]; ended != tt.ended || sum.Error != tt.err || last != tt.last {
				t.Errorf("ended, error, last action = %v, %q, %q; want %v, %q, %q",
					ended, sum.Error, last, tt.ended, tt.err, tt.last)
			}
			golden(t, strings.TrimSuffix(tt.file, ".jsonl")+".actions", strings.Join(actions, "\n")+"\n")
		})
	}
}

// The hook feedback a Claude stream repeats (a user line with string
// content) and runtasks' own reason are never taken as the agent's message.
func TestParseClaudeIgnoresUserText(t *testing.T) {
	ev, err := ParseClaude([]byte(`{"type":"user","message":{"role":"user","content":"Stop hook feedback:\n<promise>ALL TASKS COMPLETE</promise>"},"isSynthetic":true}`))
	if err != nil || ev.Text != "" || ev.Final {
		t.Fatalf("user line gave %+v, %v", ev, err)
	}
}

func TestParseBadLines(t *testing.T) {
	for _, agent := range []string{AgentClaude, AgentCodex} {
		parse, _ := ParserFor(agent)
		for _, line := range []string{"Reading additional input from stdin...", `{"type":`, `[1,2]`} {
			if _, err := parse([]byte(line)); err == nil {
				t.Errorf("%s: %q parsed without error", agent, line)
			}
		}
		// Unknown event types are not errors: new versions add them.
		ev, err := parse([]byte(`{"type":"brand.new","x":1}`))
		if err != nil || ev != (Event{}) {
			t.Errorf("%s: unknown event gave %+v, %v", agent, ev, err)
		}
	}
	if _, err := ParserFor("gemini"); err == nil {
		t.Error("ParserFor(gemini) gave no error")
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		agent, resume string
		extra         []string
		want          string
	}{
		{AgentClaude, "", nil, `[-p --output-format stream-json --verbose -- P]`},
		{AgentClaude, "", []string{"--permission-mode", "acceptEdits"}, `[-p --output-format stream-json --verbose --permission-mode acceptEdits -- P]`},
		{AgentCodex, "", []string{"--full-auto"}, `[exec --json --full-auto -- P]`},
		{AgentCodex, "01a2-thread", []string{"--full-auto"}, `[exec --json --full-auto resume 01a2-thread -- P]`},
		// A prompt that looks like an option stays the prompt.
		{AgentCodex, "", nil, `[exec --json -- --- front matter]`},
		{AgentClaude, "", []string{"--allowedTools", "Bash", "Edit"}, `[-p --output-format stream-json --verbose --allowedTools Bash Edit -- --- front matter]`},
	}
	for _, tt := range tests {
		prompt := "P"
		if strings.Contains(tt.want, "front matter") {
			prompt = "--- front matter"
		}
		if got := Command(tt.agent, prompt, tt.resume, tt.extra); fmt.Sprint(got) != tt.want {
			t.Errorf("Command(%s, %q, %v) = %v; want %s", tt.agent, tt.resume, tt.extra, got, tt.want)
		}
	}
}

func TestSummaryJSON(t *testing.T) {
	sum, _, _ := replay(t, AgentCodex, "codex-exec.jsonl")
	b, _ := json.Marshal(sum)
	if !strings.Contains(string(b), `"session_id":"01a20014-31a8-79e0-bb01-992a68ddb3dd"`) || !strings.Contains(string(b), `"events":14`) {
		t.Errorf("summary JSON = %s", b)
	}
}

// The run's usage comes from the final event of the real clients' streams
// (recorded from Claude Code 2.1.330 and Codex 0.169.0 against the e2e
// fake APIs; see transcript/testdata/usage/README.md): the same totals the
// clients reported.
func TestSummaryUsageFromRecordedStreams(t *testing.T) {
	for _, tc := range []struct {
		agent, file string
		want        usage.ModelUsage
	}{
		{AgentClaude, "claude-2.1.330-stream.jsonl", usage.ModelUsage{Model: "claude-opus-5-5",
			Tokens: usage.Tokens{Input: 515, Output: 165, CacheRead: 15000, CacheWrite: 105}}},
		{AgentCodex, "codex-0.169.0-stream.jsonl", usage.ModelUsage{
			Tokens: usage.Tokens{Input: 515, Output: 165, CacheRead: 15000}}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		parse, _ := ParserFor(tc.agent)
		var sum Summary
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			ev, err := parse(line)
			if err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			sum.Add(ev)
		}
		if sum.Usage == nil || len(sum.Usage.Models) != 1 || sum.Usage.Models[0] != tc.want {
			t.Errorf("%s: usage %+v, want %+v", tc.file, sum.Usage, tc.want)
		}
	}
}
