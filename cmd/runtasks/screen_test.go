//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
)

// hostileAgent writes escape sequences where runtasks shows what the agent
// does: a window title (OSC 0), a clipboard write (OSC 52), a screen clear,
// in a tool input and in its text, and a tool input far wider than a
// terminal. It then works for a few seconds, so the live line is redrawn.
const hostileAgent = `#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"hostile-1","model":"fake"}'
echo '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"echo \u001b]0;pwned\u0007 \u001b]52;c;aGVsbG8=\u0007 \u001b[2J go test ./... -run '"$(printf 'x%.0s' $(seq 1 200))"'"}}]}}'
sleep 2.5
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"Done \u001b]52;c;c2VjcmV0\u0007 here \u001b[2J\u001b[31mred\u009b2J"}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done \u001b]0;title\u0007","session_id":"hostile-1"}'
`

// Under a terminal of 80 columns the live line never wraps, and none of
// the agent's escape sequences reach the terminal.
func TestRunScreenAt80Columns(t *testing.T) {
	dir, env := superviseProject(t, "")
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(hostileAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("runtasks", "run", "--max-cycles", "1", "--run-id", "tty")
	cmd.Dir, cmd.Env = dir, append(env, "TERM=xterm-256color")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&screen, ptmx) // ends with EIO when runtasks exits
		close(copied)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("runtasks run did not end")
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
	}
	out := strings.ReplaceAll(screen.String(), "\r\n", "\n") // the terminal's own newline translation
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Errorf("exit %d, want 2 (max cycles)\n%q", code, out)
	}
	// The only escape sequences are runtasks' own: "\r ESC[K" to redraw.
	for _, bad := range []string{"\x1b]", "\x07", "\x1b[2J", "\x1b[31m", "\u009b", "pwned\x07"} {
		if i := strings.Index(out, bad); i >= 0 {
			t.Errorf("the agent's %q reached the terminal: %q", bad, out[max(0, i-80):min(len(out), i+80)])
		}
	}
	if stray := regexp.MustCompile(`\x1b[^\[]|\x1b\[[0-9;]*[^K0-9;]`).FindString(out); stray != "" {
		t.Errorf("an escape sequence other than ESC[K reached the terminal: %q", stray)
	}
	// Every live line (drawn after "\r ESC[K", up to the next "\r" or
	// newline) fits in 79 columns.
	redraws := 0
	for _, seg := range strings.Split(out, "\r\x1b[K")[1:] {
		line := strings.SplitN(seg, "\r", 2)[0]
		if line == "" || strings.Contains(line, "\n") {
			continue // a permanent line: it may wrap
		}
		redraws++
		if w := ansi.StringWidth(line); w > 79 {
			t.Errorf("a live line of %d columns wraps at 80: %q", w, line)
		}
	}
	if redraws < 3 {
		t.Errorf("the live line was drawn %d times, want it redrawn while the agent works:\n%q", redraws, out)
	}
	if !strings.Contains(out, "Bash: echo") || !strings.Contains(out, "…") {
		t.Errorf("the agent's action is not shown, cut to the width:\n%q", out)
	}
	if errors.Is(err, io.EOF) {
		t.Log(out)
	}
}

// On an 80-column terminal, the live view tells apart the two workers of
// one runtasks run (sessions run-…-w1, -w2) and their two runs.
func TestStatusWatchTwoWorkersAt80Columns(t *testing.T) {
	dir, env := superviseProject(t, "")
	store := &state.Store{Dir: filepath.Join(dir, ".runtasks")}
	now := time.Now()
	for _, w := range []string{"w1", "w2"} {
		id := "20261127T114002Z-17ab3f-" + w
		if _, err := store.Update("run-"+id, "demo-e", func(st *state.State) error {
			st.Cycles, st.FirstBlockAt = 1, now
			st.Last = &state.Record{Time: now, Session: "run-" + id, Epic: "demo-e", Outcome: state.OutcomeContinue, Block: true, Cycle: 1, Max: 50, Why: "work remains"}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		rec, _ := json.Marshal(headless.RunState{RunID: id, Epic: "demo-e", Agent: "claude", Status: "running", PID: os.Getpid(), Cycle: 1, MaxCycles: 50, StartedAt: now})
		if err := os.MkdirAll(filepath.Join(dir, ".runtasks", "runs", id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".runtasks", "runs", id, headless.RunFile), rec, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scr := newScreen(t)
	view := exec.Command("runtasks", "status", "--watch")
	view.Dir, view.Env = dir, append(env, "TERM=xterm-256color")
	scr.start(view)
	text := scr.waitFor("two workers", "2 loop(s)", "runtasks run · 2", "w1", "w2")
	t.Logf("80 columns:\n%s", text)
	var rows []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "demo-e") {
			rows = append(rows, strings.TrimSpace(l))
		}
	}
	if len(rows) != 4 || rows[0] == rows[1] || rows[2] == rows[3] {
		t.Errorf("the workers' rows are not told apart at 80 columns:\n%s", text)
	}
	for _, r := range rows {
		if !strings.Contains(r, "-w1") && !strings.Contains(r, "-w2") {
			t.Errorf("a row without its worker: %q\n%s", r, text)
		}
	}
	scr.ptmx.WriteString("q")
}
