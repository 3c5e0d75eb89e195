//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// screen is a pseudo-terminal of 80x24 with a terminal emulator reading
// what runtasks draws on it.
type screen struct {
	t    *testing.T
	ptmx *os.File
	tty  *os.File
	emu  *vt.SafeEmulator
}

func newScreen(t *testing.T) *screen {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, ptmx: ptmx, tty: tty, emu: vt.NewSafeEmulator(80, 24)}
	go io.Copy(s.emu, ptmx) // what runtasks draws
	go io.Copy(ptmx, s.emu) // the terminal's answers to its queries
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	return s
}

// start runs cmd on the terminal as its controlling terminal, in a session
// (and process group) of its own, killed with its group at the end.
func (s *screen) start(cmd *exec.Cmd) {
	s.t.Helper()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.tty, s.tty, s.tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
}

// waitFor waits until every want is on the screen and returns the screen.
func (s *screen) waitFor(what string, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		text := s.emu.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return text
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: %q not on the 80x24 screen after 15s:\n%s", what, missing, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lineOf is the 0-based screen line holding sub (-1 when none).
func lineOf(text, sub string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

// scriptedSession plays one Claude Code session against the real runtasks
// binary: its transcript (one API message per turn, with usage) and its
// Stop hook calls.
type scriptedSession struct {
	t          *testing.T
	s          *beadstest.Store
	id         string
	transcript string
	turns      int
}

func newScriptedSession(t *testing.T, s *beadstest.Store, id, prompt string) *scriptedSession {
	t.Helper()
	h := &scriptedSession{t: t, s: s, id: id, transcript: filepath.Join(t.TempDir(), id+".jsonl")}
	h.append(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
	return h
}

func (h *scriptedSession) append(v any) {
	h.t.Helper()
	b, _ := json.Marshal(v)
	f, err := os.OpenFile(h.transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
}

// stop writes the turn's final message (input and output tokens) and runs
// `runtasks stop-hook` with Claude Code's Stop input. A block's reason is
// then written back as Claude Code does ("Stop hook feedback:").
func (h *scriptedSession) stop(msg string, input, output int64) stopAnswer {
	h.t.Helper()
	h.turns++
	h.append(map[string]any{"type": "assistant", "message": map[string]any{
		"id": fmt.Sprintf("msg_%s_%d", h.id, h.turns), "model": "claude-opus-5-5", "role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": msg}},
		"usage":   map[string]any{"input_tokens": input, "output_tokens": output}}})
	in, _ := json.Marshal(map[string]any{"session_id": h.id, "transcript_path": h.transcript, "cwd": h.s.Root,
		"hook_event_name": "Stop", "stop_hook_active": h.turns > 1, "last_assistant_message": msg})
	code, out, errOut := runtasksBin(h.t, h.s, string(in), "stop-hook")
	if code != 0 {
		h.t.Fatalf("stop-hook: exit %d: %s", code, errOut)
	}
	var a stopAnswer
	if strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			h.t.Fatalf("stop-hook stdout is not one JSON object: %q", out)
		}
	}
	if a.Decision == "block" {
		h.append(map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": "Stop hook feedback:\n" + a.Reason}})
	}
	return a
}

// bd runs the real bd as the session's shell does: its actor is the
// session's (the session hook exports BEADS_ACTOR=<actor>@<session>), so
// it may close the tasks the session claimed.
func (h *scriptedSession) bd(args ...string) {
	h.t.Helper()
	cmd := exec.Command(h.s.Bin, args...)
	cmd.Dir, cmd.Env = h.s.Root, append(h.s.Env, "BEADS_ACTOR=tester@"+h.id)
	if out, err := cmd.CombinedOutput(); err != nil {
		h.t.Fatalf("bd %v: %v\n%s", args, err, out)
	}
}

// withoutVar is env without the variable name.
func withoutVar(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// runtasksBin runs the runtasks binary (this test binary under its
// testscript name, on PATH) in the store, in its own process group, within
// a minute.
func runtasksBin(t *testing.T, s *beadstest.Store, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "runtasks", args...)
	cmd.Dir, cmd.Env = s.Root, s.Env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("runtasks %v did not return within a minute", args)
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("runtasks %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// A scripted session blocks, claims a task and completes while another
// escalates, every state change made by the real `runtasks stop-hook`,
// `runtasks arm` and `runtasks claim` binaries over the real bd: the
// `runtasks status --watch` process on an 80x24 pseudo-terminal follows
// them, the bar moves, the escalation comes first, w shows the full reason
// and q quits cleanly (exit 0, the main screen back).
func TestIntegrationStatusWatchPseudoTerminal(t *testing.T) {
	s := userRepo(t, "demo")
	epic := s.Create("Ship the parser", "--type", "epic")
	var tasks []string
	for _, title := range []string{"Write the parser", "Test the parser", "Document the parser"} {
		tasks = append(tasks, s.Create(title, "--parent", epic, "--priority", "1"))
	}
	// A second epic whose only task waits on an issue outside it.
	other := s.Create("Release 2.0", "--type", "epic")
	waiting := s.Create("Publish the release notes", "--parent", other)
	s.Block(waiting, s.Create("Legal review of the notes"))

	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := runtasksBin(t, s, "", args...)
		if code != 0 {
			t.Fatalf("runtasks %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	run("arm", "--epic", epic, "--session", "s1")
	s1 := newScriptedSession(t, s, "s1", "/run-tasks "+epic)
	// Before the view starts: s1 stopped once, three tasks open.
	if a := s1.stop("I've made good progress.", 1000, 200); a.Decision != "block" {
		t.Fatalf("s1's first stop: %+v", a)
	}

	scr := newScreen(t)
	view := exec.Command("runtasks", "status", "--watch")
	// The user's terminal: colours (the store's NO_COLOR is for bd's output).
	view.Dir, view.Env = s.Root, append(withoutVar(s.Env, "NO_COLOR"), "TERM=xterm-256color")
	scr.start(view)
	exited := make(chan error, 1)
	go func() { exited <- view.Wait() }()

	text := scr.waitFor("start", "runtasks · 1 loop(s)", "s1", epic, "[----------] 0/3", "cycle 1/50", "1.2k",
		"continue · work remains: 3 ready", "ago", "running", "q quit")
	t.Logf("start:\n%s", text)

	// s1 claims the first task, does it (RESULTS.md, bd close) and stops:
	// the bar moves.
	run("claim", tasks[0], "--session", "s1")
	results, _ := filepath.Glob(filepath.Join(s.Root, "runs", "run-*", "RESULTS.md"))
	if len(results) != 1 {
		t.Fatalf("run folders after the claim: %v", results)
	}
	os.WriteFile(results[0], []byte("# Results\nParser written; go test passes.\n"), 0o644)
	s1.bd("close", tasks[0], "--reason", "done")
	if a := s1.stop("The parser is written.", 600, 200); a.Decision != "block" || !strings.Contains(a.Reason, "cycle 2/50") {
		t.Fatalf("s1's second stop: %+v", a)
	}
	text = scr.waitFor("claim", "[###-------] 1/3", "cycle 2/50", "claimed "+tasks[0], "2k", "work remains: 2 ready")

	// Another session drives the other epic: only blocked work, an
	// escalation. It comes first, marked.
	run("arm", "--epic", other, "--session", "s2")
	s2 := newScriptedSession(t, s, "s2", "/run-tasks "+other)
	if a := s2.stop("Waiting on the review.", 300, 50); a.Decision == "block" || !strings.Contains(a.SystemMessage, "needs a person") {
		t.Fatalf("s2's stop: %+v", a)
	}
	text = scr.waitFor("escalation", "2 loop(s)", "1 need(s) a person", "! s2", "escalated · all remaining work is blocked")
	if a, b := lineOf(text, "! s2"), lineOf(text, "s1 "); a < 0 || b < 0 || a > b {
		t.Errorf("the escalation is not at the top (s2 on line %d, s1 on line %d):\n%s", a, b, text)
	}

	// s1 closes the rest and promises: beads confirms, the bar is full.
	s1.bd("close", tasks[1], tasks[2], "--reason", "done")
	if a := s1.stop("Tested and documented.\n<promise>ALL TASKS COMPLETE</promise>", 400, 100); a.Decision == "block" {
		t.Fatalf("s1's last stop: %+v", a)
	}
	text = scr.waitFor("complete", "[##########] 3/3", "complete · promise", "2.5k")
	t.Logf("complete:\n%s", text)
	for i, l := range strings.Split(text, "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line %d is %d wide: %q", i, w, l)
		}
	}

	// w shows the full reason last fed back to the selected loop (s2 has
	// none); down selects s1.
	scr.ptmx.WriteString("j")
	scr.ptmx.WriteString("w")
	scr.waitFor("reason", "Last reason fed back to s1", "You are the orchestrator for beads epic "+epic)

	// q quits cleanly: the process ends with status 0, the main screen is back.
	scr.ptmx.WriteString("q")
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("status --watch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit within 10s")
	}
	deadline := time.Now().Add(2 * time.Second)
	for strings.Contains(scr.emu.String(), "q quit") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(scr.emu.String(), "q quit") {
		t.Errorf("the view is still on the screen after q:\n%s", scr.emu.String())
	}
}
