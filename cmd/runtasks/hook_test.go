package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
)

// panicTracker panics at the first question, as a bug deep in the engine
// or a port would.
type panicTracker struct{ engine.Tracker }

func (panicTracker) Ready(context.Context, string) ([]beads.Issue, error) { panic("boom in ready") }

// panicReader panics when the hook reads its input.
type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("boom in read") }

// TestHooksRecoverFromPanics injects a panic into each hook command: every
// one exits 0 (returns nil), lets the agent go with a systemMessage, and
// leaves the panic and its stack on stderr.
func TestHooksRecoverFromPanics(t *testing.T) {
	dir := t.TempDir()
	cfg := func() *config.Config {
		c, _, err := config.Load(config.LoadOptions{StartDir: dir, Environ: []string{"RUNTASKS_EPIC=bd-e"}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	boomConfig := func(string) (*config.Config, *config.Sources, error) { panic("boom in config") }
	input := `{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"%s","prompt":"claim bd-e.1"}`
	for _, tc := range []struct {
		name string
		run  func(in string, out, errw *bytes.Buffer) error
	}{
		{"stop-hook: a port panics", func(in string, out, errw *bytes.Buffer) error {
			return runStopHook(context.Background(), &hookOptions{Factory: &Factory{In: strings.NewReader(in), Out: out, Err: errw},
				LoadConfig: func(string) (*config.Config, *config.Sources, error) { return cfg(), nil, nil },
				Ports:      func(*config.Config) engine.Ports { return engine.Ports{Beads: panicTracker{}, Now: time.Now} }})
		}},
		{"stop-hook: loading panics", func(in string, out, errw *bytes.Buffer) error {
			return runStopHook(context.Background(), &hookOptions{Factory: &Factory{In: strings.NewReader(in), Out: out, Err: errw}, LoadConfig: boomConfig})
		}},
		{"prompt-hook", func(in string, out, errw *bytes.Buffer) error {
			return runPromptHook(context.Background(), &hookOptions{Factory: &Factory{In: strings.NewReader(in), Out: out, Err: errw}, LoadConfig: boomConfig})
		}},
		{"pre-tool-hook: reading panics", func(in string, out, errw *bytes.Buffer) error {
			// Its input is read, and the fast path decided, in the preamble.
			return runPreToolHook(context.Background(), &hookOptions{Factory: &Factory{In: panicReader{}, Out: out, Err: errw}, LoadConfig: boomConfig})
		}},
		{"session-hook", func(in string, out, errw *bytes.Buffer) error {
			return runSessionHook(context.Background(), &hookOptions{LoadConfig: boomConfig,
				Factory: &Factory{In: strings.NewReader(in), Out: out, Err: errw, Environ: func() []string { return nil }}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			event := map[bool]string{true: "Stop", false: "SessionStart"}[strings.HasPrefix(tc.name, "stop")]
			if tc.name == "prompt-hook" {
				event = "UserPromptSubmit"
			}
			if err := tc.run(strings.Replace(input, "%s", event, 1), &out, &errw); err != nil {
				t.Fatalf("returned %v: the hook must exit 0", err)
			}
			var msg struct {
				Decision      string `json:"decision"`
				SystemMessage string `json:"systemMessage"`
			}
			if err := json.Unmarshal(out.Bytes(), &msg); err != nil {
				t.Fatalf("stdout is not the agent's JSON: %q", out.String())
			}
			if msg.Decision != "" || !strings.Contains(msg.SystemMessage, "crashed (panic: boom") {
				t.Errorf("stdout %q: want an allowed stop with the panic named", out.String())
			}
			if !strings.Contains(errw.String(), "panic: boom") || !strings.Contains(errw.String(), "goroutine") {
				t.Errorf("stderr lacks the panic and its stack: %q", errw.String())
			}
		})
	}
}

// TestHookPreamble: each hook's failures before its own work are said the
// same way: exit 0, stdout only the agent's JSON (a systemMessage) or
// nothing, and a line on stderr.
func TestHookPreamble(t *testing.T) {
	dir := t.TempDir()
	badConfig := func(string) (*config.Config, *config.Sources, error) {
		return nil, nil, errors.New("project.yaml: workflow.x: unknown key")
	}
	hooks := map[string]func(o hookOptions) error{
		"stop-hook":    func(o hookOptions) error { return runStopHook(context.Background(), &o) },
		"prompt-hook":  func(o hookOptions) error { return runPromptHook(context.Background(), &o) },
		"session-hook": func(o hookOptions) error { return runSessionHook(context.Background(), &o) },
	}
	for _, tt := range []struct {
		name, input, agent string
		message            string // in the systemMessage ("" = stdout empty)
		stderr             string
	}{
		{"unreadable input", `{"session_id":`, "", "runtasks: could not read the ", "could not read the "},
		{"unknown agent", `{"session_id":"s1","cwd":"` + dir + `"}`, "vim", "", `unknown agent "vim"`},
		{"no such cwd", `{"session_id":"s1","cwd":"` + dir + `/gone"}`, "", "runtasks: the hook's cwd " + dir + "/gone does not exist; ", "does not exist"},
		{"bad configuration", `{"session_id":"s1","cwd":"` + dir + `"}`, "", "runtasks is off for this project until its configuration is fixed: project.yaml: workflow.x", "runtasks is off"},
	} {
		for name, run := range hooks {
			var out, errw bytes.Buffer
			err := run(hookOptions{Factory: &Factory{In: strings.NewReader(tt.input), Out: &out, Err: &errw}, Agent: tt.agent, LoadConfig: badConfig})
			if err != nil {
				t.Errorf("%s, %s: returned %v; a hook exits 0", name, tt.name, err)
			}
			var msg struct {
				Decision      string `json:"decision"`
				SystemMessage string `json:"systemMessage"`
			}
			switch {
			case tt.message == "" && out.Len() > 0:
				t.Errorf("%s, %s: stdout %q, want nothing", name, tt.name, out.String())
			case tt.message != "" && (json.Unmarshal(out.Bytes(), &msg) != nil || msg.Decision != "" || !strings.HasPrefix(msg.SystemMessage, tt.message)):
				t.Errorf("%s, %s: stdout %q, want a systemMessage %q…", name, tt.name, out.String(), tt.message)
			}
			if !strings.Contains(errw.String(), "runtasks "+name+": ") || !strings.Contains(errw.String(), tt.stderr) {
				t.Errorf("%s, %s: stderr %q, want %q", name, tt.name, errw.String(), tt.stderr)
			}
		}
	}
}

// readyTracker has one ready task under any epic.
type readyTracker struct{ engine.Tracker }

func (readyTracker) Ready(context.Context, string) ([]beads.Issue, error) {
	return []beads.Issue{{ID: "bd-e.1", Title: "Write the parser", Status: beads.StatusOpen}}, nil
}

// A notify that panics after the stop hook answered leaves the answer
// alone: stdout is the one block, and the panic goes to the log.
func TestStopHookNotifyPanicKeepsTheAnswer(t *testing.T) {
	dir := t.TempDir()
	var out, errw bytes.Buffer
	in := `{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"Stop","last_assistant_message":"Let me know."}`
	err := runStopHook(context.Background(), &hookOptions{Factory: &Factory{In: strings.NewReader(in), Out: &out, Err: &errw},
		LoadConfig: func(string) (*config.Config, *config.Sources, error) {
			return config.Load(config.LoadOptions{StartDir: dir, Environ: []string{"RUNTASKS_EPIC=bd-e", "RUNTASKS_STATE_DIR=" + filepath.Join(dir, "state")}})
		},
		Ports:  func(*config.Config) engine.Ports { return engine.Ports{Beads: readyTracker{}, Now: time.Now} },
		Notify: func(engine.Input, engine.Decision) { panic("boom in notify") }})
	if err != nil {
		t.Fatalf("returned %v: the hook must exit 0", err)
	}
	stdout := out.String()
	dec := json.NewDecoder(strings.NewReader(stdout))
	var answer struct {
		Decision string `json:"decision"`
	}
	if err := dec.Decode(&answer); err != nil || answer.Decision != "block" || dec.More() {
		t.Fatalf("stdout %q: want one block and nothing after it (err %v)", stdout, err)
	}
	if !strings.Contains(errw.String(), "panic: boom in notify") || !strings.Contains(errw.String(), "goroutine") {
		t.Errorf("the panic is not in the log: %q", errw.String())
	}
}
