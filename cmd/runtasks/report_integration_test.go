package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/e2e/chromium"
)

// TestIntegrationReportRuns drives one epic of six tasks with a single
// `runtasks run` and another of the same six with `runtasks run --workers
// 3`, the fake agent closing tasks with the real bd. The report of each,
// opened in headless Chromium, counts as closed exactly the tasks
// `bd list --status closed --parent EPIC` lists, in the tile, the summary,
// the closed-per-decision chart, the timeline, and the decisions,
// closed-tasks, sessions and runs tables; the single run recorded no usage
// and its report says "not recorded". The worker run is then shown by
// status --watch on an 80x24 pseudo-terminal, its workers told apart. With
// RUNTASKS_UPDATE_SCREENSHOTS=1 the worker run's report and live view
// become the README's docs/report.png and docs/watch.png.
func TestIntegrationReportRuns(t *testing.T) {
	browser := chromium.Require(t)
	s := userRepo(t, "rp")
	os.WriteFile(filepath.Join(s.Root, "project.yaml"), []byte(`run:
  claude_bin: fakeagent
beads:
  timeout: 60s
  max_processes: 2
usage:
  prices:
    - {model: "claude-fake-*", input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}
`), 0o644)
	userGit(t, s, "add", "project.yaml")
	userGit(t, s, "commit", "-qm", "runtasks")
	titles := []string{"Write the lexer", "Write the parser", "Test the parser", "Document the syntax", "Add examples", "Release notes"}

	for _, tc := range []struct {
		name string
		args []string
		env  func(epic string) []string
	}{
		{"single", nil, func(epic string) []string { return []string{"FAKEAGENT_EPIC=" + epic} }},
		{"workers", []string{"--workers", "3"}, func(string) []string {
			return []string{"FAKEAGENT_MODE=task", "FAKEAGENT_TRACE=" + filepath.Join(t.TempDir(), "trace"), "FAKEAGENT_SLEEP=1s", "FAKEAGENT_TOKENS=900"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			epic := s.Create("Ship the parser ("+tc.name+")", "--type", "epic")
			for _, title := range titles {
				s.Create(title, "--parent", epic)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			run := exec.CommandContext(ctx, "runtasks", append([]string{"run", "--epic", epic, "--max-cycles", "12", "--plain", "--run-id", tc.name}, tc.args...)...)
			run.Dir, run.Env = s.Root, append(slices.Clone(s.Env), tc.env(epic)...)
			run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			run.Cancel = func() error { return syscall.Kill(-run.Process.Pid, syscall.SIGKILL) }
			if out, err := run.CombinedOutput(); err != nil {
				t.Fatalf("runtasks run %s: %v\n%s", tc.name, err, out)
			}

			var closed []struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal([]byte(s.BD("list", "--status", "closed", "--parent", epic, "--json", "--limit", "0")), &closed); err != nil {
				t.Fatal(err)
			}
			n := len(closed)
			if n != len(titles) {
				t.Fatalf("bd list --status closed: %d tasks, want %d", n, len(titles))
			}
			page := filepath.Join(t.TempDir(), "report.html")
			if code, out, errOut := runtasksBin(t, s, "", "report", "--epic", epic, "--out", page); code != 0 {
				t.Fatalf("runtasks report: exit %d\n%s%s", code, out, errOut)
			}
			dom := chromium.DumpDOM(t, browser, page)
			// sum adds the first group of every match of re ("" counts 0).
			sum := func(re string) (total, matches int) {
				for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(dom, -1) {
					k, _ := strconv.Atoi(m[1])
					total, matches = total+k, matches+1
				}
				return total, matches
			}
			for _, c := range []struct{ what, re string }{
				{"the tile", `<div class="tile" id="tile-tasks"><b>(\d+)/6</b>`},
				{"the summary", `Tasks: (\d+) of 6 closed in beads\.`},
				{"the closed-per-decision chart", `<title>#\d+ [a-z_]+: (\d+) closed</title>`},
				{"the timeline's ticks", `<title>#\d+ [0-9:]+ cycle \d+: [a-z_]+(?:, (\d+) closed)?`},
				{"the decisions table", `<tr class="o-[a-z]+"><td class="n">\d+</td><td>[^<]*</td><td><code>[^<]*</code></td><td class="n">[^<]*</td><td>[a-z_]+</td><td class="n">(\d*)</td>`},
				{"the sessions table", `<tr><td><code>[^<]+</code></td><td>[^<]*</td><td>[^<]*</td><td>[^<]*</td><td class="n">\d+</td><td class="n">(\d+)</td>`},
				{"the runs table", `<tr><td><code>` + tc.name + `[^<]*</code></td>.*?<td class="n">\d+/\d+</td><td class="n">(\d+)</td>`},
			} {
				if got, matches := sum(c.re); got != n || matches == 0 {
					t.Errorf("%s: %d closed in %d match(es) of %s, want %d (bd list --status closed)", c.what, got, matches, c.re, n)
				}
			}
			for _, is := range closed {
				if !strings.Contains(dom, "<tr><td><code>"+is.ID+"</code></td><td>") {
					t.Errorf("the closed-tasks table has no row for %s", is.ID)
				}
			}
			if tc.name == "single" && !strings.Contains(dom, "Tokens: not recorded.") {
				t.Error("a run without usage does not say its usage was not recorded")
			}
			if tc.name == "workers" {
				if _, sessions := sum(`<tr><td><code>(run)[^<]*</code></td><td>claude</td>`); sessions != 3 {
					t.Errorf("sessions table: %d worker sessions, want 3", sessions)
				}
				png, img := chromium.Screenshot(t, browser, page, 1200, 900)
				if err := chromium.CheckNotBlank(img, 16, 0.05); err != nil {
					t.Error(err)
				}
				updateDoc(t, "report.png", png)

				// The same run in status --watch on an 80x24 terminal: its
				// three workers told apart; the README's docs/watch.png.
				scr := newScreen(t)
				view := exec.Command("runtasks", "status", "--watch")
				view.Dir, view.Env = s.Root, append(withoutVar(s.Env, "NO_COLOR"), "TERM=xterm-256color")
				scr.start(view)
				text := scr.waitFor("the workers", "-w1", "-w2", "-w3", "6/6")
				var rows []string
				for _, l := range strings.Split(text, "\n") {
					if strings.Contains(l, "-w") && strings.Contains(l, "cycle") {
						rows = append(rows, l)
					}
				}
				if len(rows) < 3 || len(slices.Compact(slices.Sorted(slices.Values(rows)))) != len(rows) {
					t.Errorf("the workers' rows are not told apart:\n%s", text)
				}
				updateWatchScreenshot(t, scr.emu)
				scr.ptmx.WriteString("q")
			}
			if t.Failed() {
				t.Logf("DOM:\n%s", dom)
			}
		})
	}
}
