package e2e

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verifyYAML makes a task pass its check once the file done-<id> exists.
const verifyYAML = `workflow:
  verify:
    checks:
      - {type: command, name: done-file, run: 'test -f done-$RUNTASKS_TASK_ID || { echo "FAIL: $RUNTASKS_TASK_ID is not done"; exit 1; }', timeout: 20s}
`

// verifyConfig replaces the project.yaml install wrote with workflow.verify, and trusts it.
func (p *project) verifyConfig(t *testing.T, env []string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.s.Root, "project.yaml"), []byte(verifyYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := p.run(t, env, p.runtasks, "trust", "--yes"); err != nil {
		t.Fatalf("runtasks trust: %v\n%s%s", err, out, errOut)
	}
}

// verifyScript is the verified-close scenario: bd close T1 while its check
// fails (denied), make it pass, close it; close T2 through sh -c, which the
// gate cannot see; make T3 pass and close it; claim completion (the stop
// audit reopens T2 and blocks); make T2 pass, close it, claim completion.
func (p *project) verifyScript() Script {
	t1, t2, t3 := p.tasks[0], p.tasks[1], p.tasks[2]
	steps := []Reply{
		{Shell: "bd close " + t1 + " --reason done"},
		{Shell: "touch done-" + t1},
		{Shell: "bd close " + t1 + " --reason done"},
		{Shell: `sh -c "bd close ` + t2 + ` --reason done"`},
		{Shell: "touch done-" + t3},
		{Shell: "bd close " + t3 + " --reason done"},
		{Text: "All three closed.\n" + promise},
		{Shell: "touch done-" + t2},
		{Shell: "bd close " + t2 + " --reason done"},
		{Text: "Fixed and closed.\n" + promise},
	}
	return func(n int, _ *Request) Reply {
		if n <= len(steps) {
			return steps[n-1]
		}
		return Reply{Text: fmt.Sprintf("unexpected request %d after the epic was done", n)}
	}
}

// assertVerify checks what reached the model at each request of
// verifyScript, and beads and runtasks' decisions after the run.
func (p *project) assertVerify(t *testing.T, srv *Server, feedback string) {
	t.Helper()
	t1, t2 := p.tasks[0], p.tasks[1]
	reqs := srv.Main()
	for _, r := range reqs {
		t.Logf("request %d tail: %.400s", r.N, r.Tail)
	}
	if len(reqs) != 10 {
		t.Fatalf("main model requests = %d, want 10", len(reqs))
	}
	has := func(n int, sub string) bool { return strings.Contains(html.UnescapeString(reqs[n-1].Tail), sub) }
	// 2: the first close was denied with the check's name and output.
	for _, sub := range []string{t1 + ": checks failed: done-file", "FAIL: " + t1 + " is not done"} {
		if !has(2, sub) {
			t.Errorf("request 2: the denial lacks %q", sub)
		}
	}
	// 4 and 7: the passing close and the script's close ran, not denied.
	for _, n := range []int{4, 5, 7} {
		if has(n, "checks failed") {
			t.Errorf("request %d: a close was denied", n)
		}
	}
	// 8: the stop audit reopened T2 and blocked with the failure.
	for _, sub := range []string{feedback, "runtasks reopened " + t2, "FAIL: " + t2 + " is not done"} {
		if !has(8, sub) {
			t.Errorf("request 8: the audit's block lacks %q", sub)
		}
	}
	if has(10, "checks failed") || has(10, "reopened") {
		t.Errorf("request 10: the last close was denied or reopened")
	}
	for _, id := range p.tasks {
		if st := p.status(t, id); st != "closed" {
			t.Errorf("%s status = %q after the run, want closed", id, st)
		}
	}
	if notes := p.s.BD("show", t2, "--json"); !strings.Contains(notes, "runtasks reopened it: closed without passing its checks") {
		t.Errorf("%s's notes lack the audit's failure: %s", t2, notes)
	}
	out, errOut, err := p.run(t, p.env, p.runtasks, "status", "--epic", p.epic, "--json")
	if err != nil {
		t.Fatalf("runtasks status: %v\n%s", err, errOut)
	}
	for _, sub := range []string{`"outcome": "close_denied"`, `"outcome": "reopened"`, `"outcome": "complete"`} {
		if !strings.Contains(out, sub) {
			t.Errorf("runtasks status --json lacks %s:\n%s", sub, out)
		}
	}
}

func TestIntegrationE2EVerifyClaudeCode(t *testing.T) {
	claude := cli(t, "claude")
	p := newProject(t, "claude")
	srv := NewAnthropic(t, p.verifyScript())
	keepLog(t, srv)
	if out, errOut, err := p.run(t, p.env, p.runtasks, "install", "claude", "--epic", p.epic); err != nil {
		t.Fatalf("runtasks install claude: %v\n%s%s", err, out, errOut)
	}
	p.verifyConfig(t, p.env)
	env := setEnv(p.env,
		"ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=dummy-e2e-key",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	out, errOut, err := p.run(t, env, claude, "-p", "Work the epic "+p.epic+" to completion.",
		"--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
	if err != nil {
		t.Fatalf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	p.assertVerify(t, srv, "Stop hook feedback:")
}

// Codex denies through the same PreToolUse protocol; the model gets
// "Command blocked by PreToolUse hook: <reason>".
func TestIntegrationE2EVerifyCodex(t *testing.T) {
	codex := cli(t, "codex")
	p := newProject(t, "codex")
	srv := NewOpenAI(t, p.verifyScript())
	keepLog(t, srv)
	env, _ := p.codexSetup(t, srv)
	p.verifyConfig(t, env)
	out, errOut, err := p.run(t, env, codex, "exec", "--json", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", "Work the epic "+p.epic+" to completion.")
	if err != nil {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	p.assertVerify(t, srv, "<hook_prompt")
	if !strings.Contains(html.UnescapeString(srv.Main()[1].Tail), "Command blocked by PreToolUse hook") {
		t.Errorf("request 2: Codex did not say the hook blocked the command")
	}
}

// Gemini CLI denies through BeforeTool; the model gets "Tool execution
// blocked: <reason>".
func TestIntegrationE2EVerifyGemini(t *testing.T) {
	gemini := cli(t, "gemini")
	p := newProject(t, "gemini")
	srv := NewGemini(t, p.verifyScript())
	keepLog(t, srv)
	env, _ := p.geminiSetup(t, srv)
	p.verifyConfig(t, env)
	out, errOut, err := p.run(t, env, gemini, "-p", "Work the epic "+p.epic+" to completion.",
		"--approval-mode", "yolo", "-m", geminiModel, "--output-format", "stream-json")
	if err != nil {
		t.Fatalf("gemini -p: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	p.assertVerify(t, srv, "Closed without passing its checks")
	if !strings.Contains(html.UnescapeString(srv.Main()[1].Tail), "Tool execution blocked") {
		t.Errorf("request 2: Gemini CLI did not say the hook blocked the tool")
	}
}
