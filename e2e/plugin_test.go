package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIntegrationE2EClaudePlugin plays the Claude Code scenario with the
// repository loaded as a plugin (claude --plugin-dir), as a user who
// installed the plugin and put runtasks on PATH (go install) does. Nothing
// is installed into the project: the plugin's hooks.json runs
// hooks/runtasks.sh, which finds runtasks on the PATH and runs it; the epic
// comes from RUNTASKS_EPIC. runtasks answers every stop (a wrapper in its
// place on PATH logs each call).
func TestIntegrationE2EClaudePlugin(t *testing.T) {
	claude := cli(t, "claude")
	p := newProject(t, "claude")
	srv := NewAnthropic(t, p.script())
	keepLog(t, srv)

	// runtasks' place on PATH: a wrapper that logs and runs the real one.
	real := p.runtasks + ".real"
	if err := os.Rename(p.runtasks, real); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(t.TempDir(), "hook-calls.log")
	wrapper := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(p.runtasks, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	env := setEnv(p.env,
		"RUNTASKS_EPIC="+p.epic,
		"ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=dummy-e2e-key",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	out, errOut, err := p.run(t, env, claude, "-p", "Work the epic "+p.epic+" to completion.",
		"--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", "--plugin-dir", repoRoot(t))
	if err != nil {
		t.Fatalf("claude -p --plugin-dir: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(p.s.Root, ".claude", "settings.json")); err == nil {
		t.Errorf("the plugin run wrote .claude/settings.json into the project")
	}
	p.assertScenario(t, srv, "Stop hook feedback:", `"tool_result"`)

	log, _ := os.ReadFile(calls)
	if n := strings.Count(string(log), "stop-hook --agent claude"); n != 3 {
		t.Errorf("runtasks answered %d stops, want 3 (two rejected promises, the accepted one):\n%s", n, log)
	}
}
