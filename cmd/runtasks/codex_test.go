package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCodexMonitorExitCodes(t *testing.T) {
	dir := t.TempDir()
	fixture := func(name string) string { return filepath.Join("..", "..", "internal", "transcript", "testdata", name) }
	tests := []struct {
		name   string
		args   []string
		env    []string
		code   int
		stdout string
		stderr string
	}{
		{"rollout with the done token", []string{"--log", fixture("codex-0.169-done-token.jsonl")}, nil, 0,
			"found: TASKMASTER_DONE::01a20014-39c4-7960-982b-a6e5b41bfae9 in the task_complete of turn 01a20014-39e2-7763-9c37-4b7f684d75fe", ""},
		{"rollout with a promise", []string{"--log", fixture("codex-0.169-blocked-complete.jsonl")}, nil, 0,
			"found: <promise>ALL TASKS COMPLETE</promise>", ""},
		{"rollout, turn ended without token", []string{"--log", fixture("codex-0.169-complete.jsonl")}, nil, 2,
			"missing: 1 task_complete event(s), none holds TASKMASTER_DONE::01a20014-39c4-7960-982b-a6e5b41bfae9 or a promise", ""},
		{"rollout, null last message", []string{"--log", fixture("codex-0.169-null-complete.jsonl")}, nil, 2, "missing: 1", ""},
		{"rollout, no turn ended", []string{"--log", fixture("codex-0.169-hook-prompt-last.jsonl")}, nil, 3, "no task_complete seen", ""},
		{"other prefix", []string{"--log", fixture("codex-0.169-done-token.jsonl")}, []string{"TASKMASTER_DONE_PREFIX=MY_DONE"}, 2, "none holds MY_DONE::", ""},
		{"another session's token", []string{"--log", fixture("codex-0.169-done-token.jsonl"), "--session", "other"}, nil, 2, "none holds TASKMASTER_DONE::other", ""},
		{"old TUI log with the token", []string{"--log", fixture("codex-tui-0.116-done.jsonl")}, nil, 0,
			"found: TASKMASTER_DONE::019d0668-5a2e-7c21-9f3b-2b8c4e1d7a10", ""},
		{"old TUI log, foreign tokens only", []string{"--log", fixture("codex-tui-0.116-missing.jsonl")}, nil, 2, "missing: 2 task_complete event(s)", ""},
		{"0.169 TUI log", []string{"--log", fixture("codex-tui-0.169.jsonl")}, nil, 3, "no task_complete seen", "Codex 0.117 and later no longer write them"},
		// Codex accepts turn_complete as task_complete's alias.
		{"rollout with turn_complete", []string{"--log", fixture("codex-0.169-turn-complete.jsonl")}, nil, 0,
			"found: TASKMASTER_DONE::01a20014-39c4-7960-982b-a6e5b41bfae9 in the task_complete of turn 01a20014-39e2-7763-9c37-4b7f684d75fe", ""},
		{"no such file", []string{"--log", filepath.Join(dir, "nope.jsonl")}, nil, 4, "", "does not exist"},
		// --follow waits for the log; one that never appears is status 3.
		{"follow, no such file", []string{"--follow", "--wait", "10ms", "--log", filepath.Join(dir, "nope.jsonl")}, []string{"TASKMASTER_POLL_INTERVAL=2ms"}, 3,
			"nope.jsonl did not appear within 10ms", ""},
		{"FIFO", []string{"--follow", "--log", filepath.Join(dir, "fifo.jsonl")}, nil, 4, "", "is a FIFO, not a regular file"},
		{"bad --wait", []string{"--follow", "--wait", "soon", "--log", filepath.Join(dir, "nope.jsonl")}, nil, 4, "", "invalid argument"},
		{"no --log", nil, nil, 4, "", "--log FILE is required"},
		{"bad flag", []string{"--bogus"}, nil, 4, "", "unknown flag"},
		{"bad poll interval", []string{"--log", fixture("codex-0.169-complete.jsonl")}, []string{"TASKMASTER_POLL_INTERVAL=soon"}, 4, "", "TASKMASTER_POLL_INTERVAL"},
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"HOME=" + dir}, tt.env...)
			code, out, errOut := runIn(t, dir, env, "", append([]string{"codex", "monitor"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
		})
	}
}

// TestCodexMonitorFollow feeds a rollout file line by line while the
// monitor follows it: it reports the token once the line is written.
func TestCodexMonitorFollow(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "transcript", "testdata", "codex-0.169-done-token.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	polls := 0
	o := &codexMonitorOptions{Factory: &Factory{Out: &out, Err: &out, Now: time.Now}, Log: path, Follow: true, Prefix: "TASKMASTER_DONE", Interval: time.Millisecond,
		Sleep: func(ctx context.Context, d time.Duration) error {
			// Each poll appends a few bytes: lines arrive torn.
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if polls < len(lines) {
				l := lines[polls]
				half := len(l) / 2
				f.WriteString(l[:half])
				f.Sync()
				f.WriteString(l[half:])
			}
			polls++
			return nil
		}}
	code := exitOf(runCodexMonitor(context.Background(), o))
	if code != 0 || !strings.Contains(out.String(), "found: TASKMASTER_DONE::01a20014") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if polls < len(lines)-2 {
		t.Errorf("found after %d polls, before the task_complete line was written", polls)
	}

	// Interrupted before any turn ended: status 3.
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, []byte(lines[0]), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	o = &codexMonitorOptions{Factory: &Factory{Out: &out, Err: &out, Now: time.Now}, Log: empty, Follow: true, Prefix: "TASKMASTER_DONE", Interval: time.Millisecond, Sleep: sleepCtx}
	if code := exitOf(runCodexMonitor(ctx, o)); code != 3 {
		t.Fatalf("interrupted follow: exit %d: %s", code, out.String())
	}
}

// TestCodexMonitorFollowWaitsForTheLog: --follow started before codex
// writes its rollout file waits for the file, then reads it; a file that
// never appears ends the wait after --wait with status 3.
func TestCodexMonitorFollowWaitsForTheLog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "transcript", "testdata", "codex-0.169-turn-complete.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	clock := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		appearsAt int // poll after which the file is written; -1: never
		code      int
		out       string
		waited    time.Duration
	}{
		{name: "appears after three polls", appearsAt: 3, code: 0, out: "found: TASKMASTER_DONE::01a20014", waited: 3 * time.Second},
		{name: "never appears", appearsAt: -1, code: 3, out: "did not appear within 1m0s", waited: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".jsonl")
			now := clock
			polls := 0
			var out strings.Builder
			o := &codexMonitorOptions{Factory: &Factory{Out: &out, Err: &out, Now: func() time.Time { return now }}, Log: path, Follow: true,
				Prefix: "TASKMASTER_DONE", Interval: time.Second, Wait: time.Minute,
				Sleep: func(ctx context.Context, d time.Duration) error {
					now = now.Add(d)
					polls++
					if polls == tt.appearsAt {
						if err := os.WriteFile(path, data, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					if polls > 1000 {
						t.Fatal("still polling")
					}
					return nil
				}}
			code := exitOf(runCodexMonitor(context.Background(), o))
			if code != tt.code || !strings.Contains(out.String(), tt.out) {
				t.Fatalf("exit %d (want %d): %s", code, tt.code, out.String())
			}
			if got := now.Sub(clock); got != tt.waited {
				t.Errorf("waited %s, want %s", got, tt.waited)
			}
		})
	}
}

// exitOf is the exit status err ends a command with.
func exitOf(err error) int {
	if ee := (*ExitError)(nil); errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return 1
	}
	return 0
}
