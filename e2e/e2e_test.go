package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// promise is the completion claim the scripted model makes.
const promise = "<promise>ALL TASKS COMPLETE</promise>"

// runLimit bounds one agent run.
const runLimit = 100 * time.Second

// repoRoot is the module root (this package lives in e2e/).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// cli returns the pinned agent CLI installed by `make e2e-tools`, failing
// (never skipping) when it is missing. RUNTASKS_E2E_BIN overrides the folder.
func cli(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("RUNTASKS_E2E_BIN")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), ".tools", "e2e", "node_modules", ".bin")
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s CLI missing at %s (run `make e2e-tools`): %v", name, bin, err)
	}
	return bin
}

// buildRuntasks builds runtasks into a temp dir, as make build does, and
// returns it. The tests put its directory on the PATH the agents start
// with: a project's hooks run runtasks from PATH.
func buildRuntasks(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "runtasks")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/runtasks")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as shipped (make build)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build runtasks: %v\n%s", err, out)
	}
	return bin
}

// wantHookBinary checks that install wrote the project's hooks through
// PATH: the agent's project settings under dir run `runtasks …`, with no
// absolute path in them (the file is committed and shared), and runtasks
// on the agents' PATH is the binary built for the test.
func (p *project) wantHookBinary(t *testing.T, dir string) {
	t.Helper()
	found := false
	filepath.WalkDir(filepath.Join(p.s.Root, dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), "stop-hook") {
			found = true
			if !strings.Contains(string(data), `"runtasks stop-hook --agent `) || strings.Contains(string(data), filepath.Dir(p.runtasks)) {
				t.Errorf("%s runs the stop hook, but not as runtasks from PATH:\n%s", path, data)
			}
		}
		return nil
	})
	if !found {
		t.Errorf("no settings file under %s/%s runs stop-hook", p.s.Root, dir)
	}
	for _, kv := range p.env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			if first := firstOnPath(path, "runtasks"); first != p.runtasks {
				t.Errorf("runtasks on the agents' PATH is %q, want %s", first, p.runtasks)
			}
		}
	}
}

// firstOnPath is the first executable named name in a PATH list.
func firstOnPath(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return filepath.Join(dir, name)
		}
	}
	return ""
}

// project is a temp git project with a real beads store holding an epic
// with three ready tasks.
type project struct {
	s         *beadstest.Store
	epic      string
	tasks     []string
	runtasks  string
	env       []string
	home, tmp string
	toolsBin  string
}

func newProject(t *testing.T, agent string) *project {
	t.Helper()
	p := &project{toolsBin: filepath.Dir(cli(t, agent))}
	p.runtasks = buildRuntasks(t)
	p.s = beadstest.NewStore(t, "e2e")
	p.epic = p.s.Create("Ship the parser", "--type", "epic")
	for _, title := range []string{"Write the parser", "Test the parser", "Document the parser"} {
		p.tasks = append(p.tasks, p.s.Create(title, "--parent", p.epic, "--priority", "1"))
	}
	base := t.TempDir()
	p.home = filepath.Join(base, "home")
	p.tmp = filepath.Join(base, "tmp")
	for _, d := range []string{p.home, p.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := strings.Join([]string{filepath.Dir(p.s.Bin), filepath.Dir(p.runtasks), p.toolsBin, os.Getenv("PATH")}, string(os.PathListSeparator))
	p.env = setEnv(p.s.Env, "HOME="+p.home, "TMPDIR="+p.tmp, "PATH="+path)
	return p
}

// setEnv returns env with the given KEY=VALUE pairs set (replacing).
func setEnv(env []string, kv ...string) []string {
	out := make([]string, 0, len(env)+len(kv))
	drop := map[string]bool{}
	for _, e := range kv {
		drop[strings.SplitN(e, "=", 2)[0]] = true
	}
	for _, e := range env {
		if !drop[strings.SplitN(e, "=", 2)[0]] {
			out = append(out, e)
		}
	}
	return append(out, kv...)
}

func (p *project) run(t *testing.T, env []string, bin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = p.s.Root
	cmd.Env = env
	cmd.Stdin = nil
	// The client in its own process group, killed with its children (Gemini
	// CLI relaunches itself as a child node, hooks run runtasks and bd).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", runLimit, err)
	}
	return out.String(), errb.String(), err
}

// script is the scenario both clients play: a false promise, two tasks
// closed with bd, another (still false) promise, the last task closed, the
// true promise. bd is found on the PATH the client passes to its shell tool
// (the test puts the pinned bd first).
func (p *project) script() Script {
	return func(n int, _ *Request) Reply {
		switch n {
		case 1:
			return Reply{Text: "All done, I think.\n" + promise}
		case 2:
			return Reply{Shell: fmt.Sprintf("bd close %s %s --reason done", p.tasks[0], p.tasks[1])}
		case 3:
			return Reply{Text: "Two closed.\n" + promise}
		case 4:
			return Reply{Shell: fmt.Sprintf("bd close %s --reason done", p.tasks[2])}
		case 5:
			return Reply{Text: "Every task is closed.\n" + promise}
		}
		return Reply{Text: fmt.Sprintf("unexpected request %d after the epic was done", n)}
	}
}

// promptLine is the first line of runtasks' rendered orchestration prompt,
// which every block reason re-feeds.
func (p *project) promptLine(t *testing.T) string {
	t.Helper()
	out, errOut, err := p.run(t, p.env, p.runtasks, "prompt", "--epic", p.epic)
	if err != nil {
		t.Fatalf("runtasks prompt: %v\n%s", err, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	t.Fatalf("runtasks prompt printed nothing")
	return ""
}

// keepLog writes the fake server's request log to E2E_LOG_DIR (default: the
// system temp dir) when the test fails, one JSON body per request.
func keepLog(t *testing.T, srv *Server) {
	t.Cleanup(func() {
		if !t.Failed() && os.Getenv("E2E_LOG_DIR") == "" {
			return
		}
		dir, err := os.MkdirTemp(os.Getenv("E2E_LOG_DIR"), "runtasks-e2e-"+t.Name()+"-")
		if err != nil {
			t.Logf("keep request log: %v", err)
			return
		}
		for i, r := range srv.Log() {
			name := filepath.Join(dir, fmt.Sprintf("%02d-%s%s.json", i+1, r.Method, strings.ReplaceAll(r.Path, "/", "_")))
			_ = os.WriteFile(name, r.Body, 0o644)
		}
		t.Logf("request log kept in %s", dir)
	})
}

// assertScenario checks the request log of one run of script().
// feedback is how the client wraps a Stop-hook reason for the model;
// toolResult marks a tool result in a request's tail.
func (p *project) assertScenario(t *testing.T, srv *Server, feedback, toolResult string) {
	t.Helper()
	reqs := srv.Main()
	for _, r := range reqs {
		t.Logf("request %d tail: %.240s", r.N, r.Tail)
	}
	if len(reqs) != 5 {
		t.Fatalf("main model requests = %d, want 5 (false promise, close 2, false promise, close 1, true promise)", len(reqs))
	}
	// Codex XML-escapes block reasons inside <hook_prompt>.
	mustHave := func(n int, subs ...string) {
		t.Helper()
		for _, sub := range subs {
			if !strings.Contains(html.UnescapeString(reqs[n-1].Tail), sub) {
				t.Errorf("request %d: what reached the model lacks %q", n, sub)
			}
		}
	}
	mustNot := func(n int, sub string) {
		t.Helper()
		if strings.Contains(reqs[n-1].Tail, sub) {
			t.Errorf("request %d: unexpected %q reached the model", n, sub)
		}
	}
	// 1: the user's prompt, no hook feedback yet.
	mustNot(1, feedback)
	// 2: runtasks blocked the first stop; the rejection of the false promise
	// and the open tasks reached the model as hook feedback.
	mustHave(2, feedback, "completion rejected: 3 remain", p.tasks[0], p.promptLine(t))
	// 3: the bd close ran through the shell tool; no stop happened between.
	mustHave(3, toolResult)
	mustNot(3, feedback)
	// 4: the second promise was still false (one task open): rejected again.
	mustHave(4, feedback, "completion rejected: 1 remain", p.tasks[2])
	mustNot(4, p.tasks[0])
	// 5: the last close ran.
	mustHave(5, toolResult)
	mustNot(5, feedback)
	// The session ended right after the true promise: beads is done.
	for _, id := range p.tasks {
		if st := p.status(t, id); st != "closed" {
			t.Errorf("%s status = %q after the run, want closed", id, st)
		}
	}
	if out := p.s.BD("ready", "--json", "--parent", p.epic, "--limit", "0"); strings.Contains(out, `"id"`) {
		t.Errorf("ready work left under %s: %s", p.epic, out)
	}
}

var statusRE = regexp.MustCompile(`"status"\s*:\s*"([a-z_]+)"`)

func (p *project) status(t *testing.T, id string) string {
	t.Helper()
	m := statusRE.FindStringSubmatch(p.s.BD("show", id, "--json"))
	if m == nil {
		t.Fatalf("bd show %s: no status", id)
	}
	return m[1]
}

// assertDecisions checks runtasks' own decision log (runtasks status --json):
// the Stop decisions were two rejected promises, then the accepted one. It
// returns how many of the 5 responses the recorded usage covers.
func (p *project) assertDecisions(t *testing.T, cacheWrites bool) int {
	t.Helper()
	out, errOut, err := p.run(t, p.env, p.runtasks, "status", "--epic", p.epic, "--json")
	if err != nil {
		t.Fatalf("runtasks status: %v\n%s", err, errOut)
	}
	var st struct {
		History []struct {
			Event   string `json:"event"`
			Outcome string `json:"outcome"`
			Block   bool   `json:"block"`
			Why     string `json:"why"`
			Usage   *struct {
				Input      int64 `json:"input"`
				Output     int64 `json:"output"`
				CacheRead  int64 `json:"cache_read"`
				CacheWrite int64 `json:"cache_write"`
			} `json:"usage"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("runtasks status --json: %v\n%s", err, out)
	}
	var got []string
	var usage [4]int64
	for _, h := range st.History {
		if h.Event == "Stop" || h.Event == "AfterAgent" { // Gemini CLI's stop
			got = append(got, fmt.Sprintf("%s block=%v %s", h.Outcome, h.Block, h.Why))
			if h.Usage == nil {
				t.Logf("Stop decision %q recorded no usage (its responses were not in the transcript yet)", h.Why)
				continue
			}
			usage[0] += h.Usage.Input
			usage[1] += h.Usage.Output
			usage[2] += h.Usage.CacheRead
			usage[3] += h.Usage.CacheWrite
		}
	}
	// The usage read at each stop adds up to what the fake API reported
	// for the responses (UsageFor, distinct per response), each counted at
	// most once. A client may write a response to its transcript only after
	// the Stop hook that follows it ran (Claude Code 2.1.330 under load):
	// such a response can be missed (docs/usage.md), never counted twice or
	// invented. So the sums must be those of a set of responses, and most
	// of them.
	counted := -1
	for set := 0; set < 1<<5; set++ {
		var sum [4]int64
		n := 0
		for k := 1; k <= 5; k++ {
			if set&(1<<(k-1)) != 0 {
				u := UsageFor(k)
				sum[0], sum[1], sum[2] = sum[0]+u.Input, sum[1]+u.Output, sum[2]+u.CacheRead
				if cacheWrites {
					sum[3] += u.CacheWrite
				}
				n++
			}
		}
		if sum == usage {
			counted = n
			break
		}
	}
	switch {
	case counted < 0:
		t.Errorf("usage recorded at the stops (input, output, cache read, cache write) = %v: not the sum of a set of the 5 responses (all 5: %v)",
			usage, responses(5, cacheWrites))
	case counted < 3:
		t.Errorf("usage recorded at the stops = %v: only %d of 5 responses counted", usage, counted)
	case counted < 5:
		t.Logf("%d of 5 responses counted: the others reached the transcript after the Stop hook ran", counted)
	}
	want := []string{
		"rejected block=true completion rejected: 3 remain",
		"rejected block=true completion rejected: 1 remain",
		`complete block=false promise "ALL TASKS COMPLETE" confirmed by beads`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runtasks Stop decisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return counted
}

func TestIntegrationE2EClaudeCode(t *testing.T) {
	claude := cli(t, "claude")
	p := newProject(t, "claude")
	srv := NewAnthropic(t, p.script())
	keepLog(t, srv)

	if out, errOut, err := p.run(t, p.env, p.runtasks, "install", "claude", "--epic", p.epic); err != nil {
		t.Fatalf("runtasks install claude: %v\n%s%s", err, out, errOut)
	}
	p.wantHookBinary(t, ".claude")
	env := setEnv(p.env,
		"ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=dummy-e2e-key",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	start := time.Now()
	out, errOut, err := p.run(t, env, claude, "-p", "Work the epic "+p.epic+" to completion.",
		"--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
	t.Logf("claude -p took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	keepFixtures(t, out, filepath.Join(p.home, ".claude", "projects"), "claude")
	p.assertScenario(t, srv, "Stop hook feedback:", `"tool_result"`)

	// The run ended normally (not through Claude Code's block cap).
	var result struct {
		Type     string `json:"type"`
		Subtype  string `json:"subtype"`
		IsError  bool   `json:"is_error"`
		Result   string `json:"result"`
		NumTurns int    `json:"num_turns"`
	}
	for _, line := range strings.Split(out, "\n") {
		var r = result
		if json.Unmarshal([]byte(line), &r) == nil && r.Type == "result" {
			result = r
		}
	}
	if result.Subtype != "success" || result.IsError || !strings.Contains(result.Result, promise) {
		t.Errorf("claude result = %+v, want success ending with the promise", result)
	}
	if strings.Contains(out+errOut, "consecutive times") {
		t.Errorf("Claude Code's block cap fired")
	}
	p.assertDecisions(t, true)
}

func TestIntegrationE2ECodex(t *testing.T) {
	codex := cli(t, "codex")
	p := newProject(t, "codex")
	srv := NewOpenAI(t, p.script())
	keepLog(t, srv)
	env, codexHome := p.codexSetup(t, srv)

	start := time.Now()
	out, errOut, err := p.run(t, env, codex, "exec", "--json", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", "Work the epic "+p.epic+" to completion.")
	t.Logf("codex exec took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	keepFixtures(t, out, filepath.Join(codexHome, "sessions"), "codex")
	p.assertScenario(t, srv, "<hook_prompt", `function_call_output`)

	// One turn: the Stop-hook continuations stay in it, and it completed.
	if n := strings.Count(out, `"type":"turn.completed"`); n != 1 {
		t.Errorf("turn.completed events = %d, want 1\n%s", n, out)
	}
	if strings.Contains(out, `"type":"turn.failed"`) {
		t.Errorf("codex turn failed:\n%s", out)
	}
	p.assertDecisions(t, false)
}

// codexSetup points Codex at the fake API and installs runtasks' hooks,
// trusted through codex app-server; it returns Codex's environment.
func (p *project) codexSetup(t *testing.T, srv *Server) ([]string, string) {
	t.Helper()
	codexHome := filepath.Join(p.home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake Responses"
base_url = "%s/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"
`, srv.URL, p.s.Root)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := setEnv(p.env, "CODEX_HOME="+codexHome, "FAKE_API_KEY=dummy-e2e-key")

	// install trusts the hooks through `codex app-server` (codex is on PATH).
	out, errOut, err := p.run(t, env, p.runtasks, "install", "codex", "--epic", p.epic)
	if err != nil {
		t.Fatalf("runtasks install codex: %v\n%s%s", err, out, errOut)
	}
	p.wantHookBinary(t, ".codex")
	t.Logf("runtasks install codex:\n%s%s", out, errOut)
	cfg, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "trusted_hash") {
		t.Fatalf("runtasks install did not trust the hooks through codex app-server; config.toml:\n%s", cfg)
	}
	return env, codexHome
}

// responses is the usage the fake API reported for requests 1 to k (the
// scenario's main requests; neither client made a side request), input
// without the cached tokens; Codex reports no cache writes.
func responses(k int, cacheWrites bool) [4]int64 {
	var sum [4]int64
	for n := 1; n <= k; n++ {
		u := UsageFor(n)
		sum[0] += u.Input
		sum[1] += u.Output
		sum[2] += u.CacheRead
		if cacheWrites {
			sum[3] += u.CacheWrite
		}
	}
	return sum
}

// keepFixtures copies a run's transcripts (every .jsonl under dir) and its
// stdout event stream into E2E_RECORD_DIR when it is set: this is how
// the transcript package's fixtures of real clients are recorded
// (E2E_RECORD_DIR=$PWD/transcript/testdata/recorded make e2e).
func keepFixtures(t *testing.T, stdout, dir, agent string) {
	t.Helper()
	dest := os.Getenv("E2E_RECORD_DIR")
	if dest == "" {
		return
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, agent+"-stream.jsonl"), []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		name := fmt.Sprintf("%s-transcript-%d.jsonl", agent, n)
		t.Logf("recorded %s as %s", path, name)
		return os.WriteFile(filepath.Join(dest, name), b, 0o644)
	})
	if err != nil {
		t.Fatalf("record fixtures: %v", err)
	}
}
