package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// geminiSettings are the user settings that keep Gemini CLI offline and
// quiet: the API-key auth (GOOGLE_GEMINI_BASE_URL alone would select the
// gateway auth, which -p rejects), no usage statistics, telemetry, update
// check or IDE.
const geminiSettings = `{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
  "ide": { "enabled": false }
}
`

// The scenario of the other clients under Gemini CLI 0.61: `runtasks install
// gemini` writes the project's .gemini/settings.json; gemini -p runs in the
// trusted folder (GEMINI_CLI_TRUST_WORKSPACE: -p cannot ask) against the
// fake Gemini API. Its AfterAgent hook blocks twice (the block reason comes
// back as a user message, verbatim) and allows the true promise. Gemini
// writes a turn's response to its transcript before AfterAgent runs, so the
// usage runtasks records covers all five responses, each once.
func TestIntegrationE2EGemini(t *testing.T) {
	gemini := cli(t, "gemini")
	p := newProject(t, "gemini")
	srv := NewGemini(t, p.script())
	keepLog(t, srv)
	env, gemHome := p.geminiSetup(t, srv)

	start := time.Now()
	out, errOut, err := p.run(t, env, gemini, "-p", "Work the epic "+p.epic+" to completion.",
		"--approval-mode", "yolo", "-m", geminiModel, "--output-format", "stream-json")
	t.Logf("gemini -p took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("gemini -p: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	chats := filepath.Join(gemHome, "tmp")
	keepFixtures(t, out, chats, "gemini")
	// Gemini sends the reason verbatim, no prefix: the rejection is the mark.
	p.assertScenario(t, srv, "completion rejected", `"functionResponse"`)

	// The run ended normally: a successful result event.
	var result struct {
		Type   string `json:"type"`
		Status string `json:"status"`
		Stats  struct {
			Input  int64 `json:"input"` // without the cached tokens
			Output int64 `json:"output_tokens"`
			Cached int64 `json:"cached"`
		} `json:"stats"`
	}
	for _, line := range strings.Split(out, "\n") {
		var r = result
		if json.Unmarshal([]byte(line), &r) == nil && r.Type == "result" {
			result = r
		}
	}
	if result.Status != "success" {
		t.Errorf("gemini result = %+v, want success\n%s", result, out)
	}
	// Gemini's own totals are the fake API's usage, but for the thinking
	// tokens (1 to 5, one per response), which it leaves out of output.
	if want := responses(5, false); result.Stats.Input != want[0] || result.Stats.Output+15 != want[1] || result.Stats.Cached != want[2] {
		t.Errorf("gemini result stats %+v; the fake API reported %v (15 of the output as thoughts)", result.Stats, want)
	}

	// What Gemini wrote to its transcript is what the fake API reported:
	// the tokens fields of its model records, each response once.
	if got, want := geminiTranscriptTokens(t, chats), responses(5, false); got != want {
		t.Errorf("the transcript's tokens (input without cache, output with thoughts, cache read) = %v, the fake API reported %v", got, want)
	}
	// runtasks counted every response once, at the stop that followed it.
	if n := p.assertDecisions(t, false); n != 5 {
		t.Errorf("runtasks counted %d of 5 responses; Gemini writes each before its AfterAgent hook runs", n)
	}
}

// geminiSetup keeps Gemini CLI offline, points it at the fake API and
// installs runtasks' hooks; it returns Gemini's environment and home.
func (p *project) geminiSetup(t *testing.T, srv *Server) ([]string, string) {
	t.Helper()
	gemHome := filepath.Join(p.home, ".gemini")
	if err := os.MkdirAll(gemHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gemHome, "settings.json"), []byte(geminiSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := p.run(t, p.env, p.runtasks, "install", "gemini", "--epic", p.epic); err != nil {
		t.Fatalf("runtasks install gemini: %v\n%s%s", err, out, errOut)
	}
	p.wantHookBinary(t, ".gemini")
	env := setEnv(p.env, "GEMINI_API_KEY=dummy-e2e-key", "GOOGLE_GEMINI_BASE_URL="+srv.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true", "TERM=dumb", "NO_COLOR=1")
	return env, gemHome
}

// geminiTranscriptTokens sums the tokens fields of the model records of the
// one Gemini CLI transcript under dir (a record rewritten with the same id
// counts once, its last version): input less the cached tokens plus tool
// prompt tokens, output plus thoughts, cached.
func geminiTranscriptTokens(t *testing.T, dir string) [4]int64 {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("Gemini transcripts under %s: %v, want one", dir, files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type tokens struct {
		Input, Output, Cached, Thoughts, Tool int64
	}
	byID := map[string]tokens{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			ID     string  `json:"id"`
			Type   string  `json:"type"`
			Tokens *tokens `json:"tokens"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type == "gemini" && r.Tokens != nil {
			byID[r.ID] = *r.Tokens
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var sum [4]int64
	for _, tk := range byID {
		sum[0] += tk.Input - tk.Cached + tk.Tool
		sum[1] += tk.Output + tk.Thoughts
		sum[2] += tk.Cached
	}
	return sum
}
