package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCodexMonitorExitCodes(t *testing.T) {
	dir := t.TempDir()
	fixture := func(name string) string { return filepath.Join("..", "..", "transcript", "testdata", name) }
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
		{"no such file", []string{"--log", filepath.Join(dir, "nope.jsonl")}, nil, 4, "", "does not exist"},
		{"no --log", nil, nil, 4, "", "--log FILE is required"},
		{"bad flag", []string{"--bogus"}, nil, 4, "", "unknown flag"},
		{"bad poll interval", []string{"--log", fixture("codex-0.169-complete.jsonl")}, []string{"TASKMASTER_POLL_INTERVAL=soon"}, 4, "", "TASKMASTER_POLL_INTERVAL"},
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
	data, err := os.ReadFile(filepath.Join("..", "..", "transcript", "testdata", "codex-0.169-done-token.jsonl"))
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
	o := &codexMonitorOptions{Out: &out, Err: &out, Log: path, Follow: true, Prefix: "TASKMASTER_DONE", Interval: time.Millisecond,
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
	code, _ := runCodexMonitor(context.Background(), o)
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
	o = &codexMonitorOptions{Out: &out, Err: &out, Log: empty, Follow: true, Prefix: "TASKMASTER_DONE", Interval: time.Millisecond, Sleep: sleepCtx}
	if code, _ := runCodexMonitor(ctx, o); code != 3 {
		t.Fatalf("interrupted follow: exit %d: %s", code, out.String())
	}
}
