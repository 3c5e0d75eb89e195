package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/e2e/chromium"
	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/report/reporttest"
)

// TestReportChromiumIntegrationE2E writes a report with the runtasks
// binary from a decision log, run records and a fake bd serving the
// epic's tasks, opens it in headless Chromium, checks the DOM it built and
// a screenshot of it. (The README's docs/report.png is made from a real
// worker run: TestIntegrationReportRuns in cmd/runtasks.)
func TestReportChromiumIntegrationE2E(t *testing.T) {
	browser := chromium.Require(t)
	bin := buildRuntasks(t)
	dir := t.TempDir()
	fix := reporttest.Fixture()
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	var log strings.Builder
	for _, r := range fix.Records {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		log.Write(append(b, '\n'))
	}
	writeFile(t, filepath.Join(dir, ".runtasks", "decisions.jsonl"), log.String())
	for _, run := range fix.Runs {
		b, err := json.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, ".runtasks", "runs", run.RunID, "run.json"), string(b))
	}

	tasks, err := json.Marshal(append([]beads.Issue{{ID: fix.Epic, Title: fix.Title, Status: beads.StatusOpen, IssueType: beads.TypeEpic}}, fix.Tasks...))
	if err != nil {
		t.Fatal(err)
	}
	bd := filepath.Join(dir, "fakebd")
	writeFile(t, bd+".json", string(tasks))
	writeFile(t, bd, "#!/bin/sh\ncat \"$0.json\"\n")
	if err := os.Chmod(bd, 0o755); err != nil {
		t.Fatal(err)
	}

	page := filepath.Join(dir, "out", "report.html")
	if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "report", "--epic", fix.Epic, "--out", page)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "TZ=UTC", "RUNTASKS_BD=" + bd}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("runtasks report: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Epic bd-e1 (Ship the parser): complete in 2h00m") {
		t.Errorf("runtasks report printed no summary:\n%s", out)
	}

	dom := chromium.DumpDOM(t, browser, page)
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(dom, -1)) }
	checks := []struct {
		what      string
		re        string
		wantCount int // -1: at least one
	}{
		{"the summary at the top", `(?s)<body>.*<pre class="summary" id="summary">Epic bd-e1 \(Ship the parser\): complete in 2h00m`, 1},
		{"the closed tasks in the tile", `<div class="tile" id="tile-tasks"><b>4/4</b>`, 1},
		{"a row per closed task, titled", `<tr><td><code>bd-e1\.\d</code></td><td>[^<]`, 4},
		{"the title's markup as text", `Release &lt;b&gt;it&lt;/b&gt;`, -1},
		{"the timeline", `<svg id="timeline"`, 1},
		{"a row per session", `<g class="row">`, 2},
		{"a tick per decision", `<g class="cycle `, 6},
		{"the rejected promise marked", `<g class="cycle rejected">`, 1},
		{"the escalation marked", `<g class="cycle escalated">`, 1},
		{"the stuck task marked", `<g class="cycle stuck">`, 1},
		{"the completion marked", `<g class="cycle complete">`, 1},
		{"a bar per decision in two charts", `<rect class="m-`, 12},
		{"a table row per decision", `<tr class="o-`, 6},
		{"the tasks' costs", `<td><code>bd-e1\.1</code> Write the parser</td><td class="n">2</td>`, 1},
		{"the run and the tasks its session closed", `<td><code>20260302-103000-ab12</code></td>.*<td class="n">2</td>`, 1},
		{"the reason's markup as text (tick title and table)", `&lt;script&gt;alert\("x"\)&lt;/script&gt;`, 2},
		{"no script element", `<script`, 0},
	}
	for _, c := range checks {
		n := count(c.re)
		if (c.wantCount < 0 && n == 0) || (c.wantCount >= 0 && n != c.wantCount) {
			t.Errorf("%s: %d match(es) of %s in the DOM, want %d", c.what, n, c.re, c.wantCount)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	png, img := chromium.Screenshot(t, browser, page, 1200, 900)
	if err := chromium.CheckNotBlank(img, 16, 0.05); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot: %d bytes", len(png))
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
