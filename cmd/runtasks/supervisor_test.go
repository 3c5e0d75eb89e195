//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/shell"
	"github.com/runtasks/runtasks/internal/shell/shelltest"
)

// wrapperAgent is an agent started through a wrapper script, as many are:
// the script prints Claude stream-json, starts a tool that leaves a
// grandchild holding stdout (`sleep 600 &`), then works through 40 steps.
// With AGENT_TRAP set it ignores SIGINT and SIGTERM, so that only the
// SIGKILL after --grace stops it. Its pid (= its process group) goes to
// $AGENT_PIDFILE.
const wrapperAgent = `#!/bin/sh
[ -n "$AGENT_TRAP" ] && trap '' INT TERM
echo $$ > "$AGENT_PIDFILE"
echo '{"type":"system","subtype":"init","session_id":"wrap-1","model":"fake"}'
echo '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"sleep 600 &"}}]}}'
sleep 600 &
i=0
while [ $i -lt 40 ]; do
	echo '{"type":"assistant","message":{"content":[{"type":"text","text":"step '$i'"}]}}'
	sleep 1
	i=$((i+1))
done
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"wrap-1"}'
`

// superviseProject is a project whose epic demo-e has one open task, served
// by the fake bd, and whose claude is wrapperAgent.
func superviseProject(t testing.TB, yaml string) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"agent.sh":      wrapperAgent,
		"project.yaml":  "workflow:\n  epic: demo-e\nrun:\n  claude_bin: ./agent.sh\n" + yaml,
		"bd/list.json":  `[{"id":"demo-e","title":"E","status":"open","issue_type":"epic"},{"id":"demo-e.1","title":"T","status":"open","issue_type":"task","parent":"demo-e"}]`,
		"bd/ready.json": `[{"id":"demo-e.1","title":"T","status":"open","issue_type":"task","parent":"demo-e"}]`,
		"bd/show.json":  `[{"id":"demo-e","title":"E","status":"open","issue_type":"epic"}]`,
		".home/.keep":   "",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env = append(os.Environ(), "HOME="+filepath.Join(dir, ".home"), "XDG_CONFIG_HOME="+filepath.Join(dir, ".home", ".config"),
		"CLAUDE_PROJECT_DIR=", "RUNTASKS_BD=fakebd",
		"FAKEBD_DIR="+filepath.Join(dir, "bd"), "BEADS_DIR="+filepath.Join(dir, "bd"), "AGENT_PIDFILE="+filepath.Join(dir, "agent.pid"), "NO_COLOR=1")
	return dir, env
}

// Ctrl-C, SIGTERM, SIGHUP, a second Ctrl-C and --max-duration stop the
// wrapper agent's whole process group, grandchild included: runtasks exits
// within --grace and a second with the documented status, run.json says
// why, and no process of the group is left.
func TestRunStopsTheAgentsProcessGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agents that need seconds to stop")
	}
	const grace = 2 * time.Second
	tests := []struct {
		name   string
		trap   bool // the wrapper ignores SIGINT and SIGTERM
		sigs   []syscall.Signal
		args   []string
		code   int
		status string
		why    string
		limit  time.Duration // from the signal (or the agent's start) to runtasks' exit
	}{
		{name: "SIGINT", sigs: []syscall.Signal{syscall.SIGINT}, code: 130, status: "interrupted", why: "interrupted in cycle 1/3", limit: grace + time.Second},
		{name: "SIGINT, agent ignores it", trap: true, sigs: []syscall.Signal{syscall.SIGINT}, code: 130, status: "interrupted", why: "interrupted in cycle 1/3", limit: grace + time.Second},
		{name: "SIGTERM", trap: true, sigs: []syscall.Signal{syscall.SIGTERM}, code: 130, status: "interrupted", why: "interrupted in cycle 1/3", limit: grace + time.Second},
		{name: "SIGHUP", trap: true, sigs: []syscall.Signal{syscall.SIGHUP}, code: 130, status: "interrupted", why: "interrupted in cycle 1/3", limit: grace + time.Second},
		{name: "second Ctrl-C kills at once", trap: true, sigs: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, code: 130, status: "interrupted", why: "interrupted in cycle 1/3", limit: time.Second},
		{name: "max duration", trap: true, args: []string{"--max-duration", "1s"}, code: 2, status: "limit", why: "max_duration 1s spent since the first block", limit: time.Second + grace + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, env := superviseProject(t, "")
			if tt.trap {
				env = append(env, "AGENT_TRAP=1")
			}
			args := append([]string{"run", "--max-cycles", "3", "--grace", grace.String(), "--run-id", "r1", "--plain"}, tt.args...)
			cmd := exec.Command("runtasks", args...)
			cmd.Dir, cmd.Env = dir, env
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			pgid := shelltest.ReadPID(t, filepath.Join(dir, "agent.pid"))
			time.Sleep(300 * time.Millisecond) // the grandchild is started
			if len(shelltest.Members(pgid)) < 2 {
				t.Fatalf("the agent's group %d has %v, want the wrapper and its grandchild", pgid, shelltest.Members(pgid))
			}
			start := time.Now()
			for i, sig := range tt.sigs {
				if i > 0 {
					time.Sleep(200 * time.Millisecond)
				}
				cmd.Process.Signal(sig)
			}
			select {
			case <-exited:
			case <-time.After(tt.limit + 5*time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("runtasks did not exit\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			}
			el := time.Since(start)
			t.Logf("exited %s after the signal", el.Round(time.Millisecond))
			if el > tt.limit {
				t.Errorf("runtasks exited %s after the signal, want within %s", el.Round(time.Millisecond), tt.limit)
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errb.String())
			}
			shelltest.GroupGone(t, pgid)
			st, err := headless.ReadRun(filepath.Join(dir, ".runtasks", "runs", "r1"))
			if err != nil || st.Status != tt.status || !strings.Contains(st.Why, tt.why) || st.ExitCode == nil || *st.ExitCode != tt.code {
				t.Errorf("run.json = %+v, %v; want status %s, why %q", st, err, tt.status, tt.why)
			}
			if len(tt.sigs) > 0 && !strings.Contains(out.String(), "stopping the agent (Ctrl-C again to kill)") {
				t.Errorf("the screen does not say it is stopping:\n%s", out.String())
			}
		})
	}
}

// SIGTERM (an agent's hook timeout) and SIGHUP to the stop hook during a
// hanging command check: the check's process group (its grandchild holding
// the output included) is stopped, the hook answers within the check
// runner's grace and a second, and the interrupted check could not run:
// the stop is allowed, never blocked.
func TestStopHookStopsAHangingCheck(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir, env := superviseProject(t, "  stop_hook:\n    enabled: true\n")
			yaml := "workflow:\n  epic: demo-e\n  checks:\n    - {type: command, name: tests, run: 'echo $$ > check.pid; sleep 600 & sleep 600', timeout: 10m}\n"
			if err := os.WriteFile(filepath.Join(dir, "project.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			trustProject(t, dir, env)
			cmd := exec.Command("runtasks", "stop-hook", "--agent", "claude")
			cmd.Dir, cmd.Env = dir, env
			cmd.Stdin = strings.NewReader(`{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"Stop","last_assistant_message":"done"}`)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			pgid := shelltest.ReadPID(t, filepath.Join(dir, "check.pid"))
			time.Sleep(200 * time.Millisecond)
			start := time.Now()
			cmd.Process.Signal(sig)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("the hook did not exit\nstderr:\n%s", errb.String())
			}
			if el, limit := time.Since(start), shell.DefaultGrace+time.Second; el > limit {
				t.Errorf("the hook answered %s after %s, want within %s", el.Round(time.Millisecond), sig, limit)
			}
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit %d, want 0 (a hook always exits 0)", code)
			}
			shelltest.GroupGone(t, pgid)
			if strings.Contains(out.String(), `"block"`) {
				t.Errorf("an interrupted check blocked the stop: %s", out.String())
			}
			if !strings.Contains(out.String(), "could not run") {
				t.Errorf("the answer does not say the check could not run: %q\nstderr:\n%s", out.String(), errb.String())
			}
		})
	}
}

// bigLineAgent streams one 200 MB line (no newline until the end) between
// two ordinary events.
const bigLineAgent = `#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"big-1","model":"fake"}'
printf '{"type":"user","message":{"content":"'
head -c 209715200 /dev/zero | tr '\0' 'x'
echo '"}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"big-1"}'
`

// BenchmarkRunPeakMemory200MBLine reports runtasks run's peak memory (the
// process' maximum resident set) while the agent streams a 200 MB line:
// the line is logged, not parsed (headless.MaxLine), so memory stays flat.
// Goal: under 64 MB.
func BenchmarkRunPeakMemory200MBLine(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir, env := superviseProject(b, "")
		if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(bigLineAgent), 0o755); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("runtasks", "run", "--max-cycles", "1", "--run-id", "big", "--plain")
		cmd.Dir, cmd.Env = dir, env
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 {
			b.Fatalf("exit %d, want 2 (max cycles)\n%s", code, out)
		}
		if !strings.Contains(string(out), "skipped an agent event longer than the line cap") {
			b.Errorf("no warning for the skipped line:\n%s", out)
		}
		fi, err := os.Stat(filepath.Join(dir, ".runtasks", "runs", "big", "cycle-001.jsonl"))
		if err != nil || fi.Size() < 200<<20 {
			b.Errorf("the cycle log does not keep the line: %v, %v", fi, err)
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			b.Skip("no rusage here")
		}
		peak := float64(ru.Maxrss) / 1024 // KiB on Linux
		b.ReportMetric(peak, "peak-MB")
		if peak >= 64 {
			b.Errorf("runtasks' peak memory %.1f MB, want under 64 MB", peak)
		}
	}
}
