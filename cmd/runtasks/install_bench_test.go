package main

// Benchmark of issue 15: `runtasks install claude` into a 20,000-line
// settings file (and a 40,000-line one, to show the cost is linear), run as
// the shipped binary in a child process: wall time and peak RSS (medians of
// benchRuns). docs/benchmarks.md holds the figures of one run.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigSettings is a Claude Code settings file of about lines lines: a long
// permissions list and many user hooks, two-space indented.
func bigSettings(lines int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"permissions\": {\n    \"allow\": [\n")
	n := lines / 2
	for i := range n {
		sep := ","
		if i == n-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "      \"Bash(tool-%05d:*)\"%s\n", i, sep)
	}
	b.WriteString("    ]\n  },\n  \"hooks\": {\n    \"PreToolUse\": [\n")
	groups := (lines - n) / 10
	for i := range groups {
		sep := ","
		if i == groups-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "      {\n        \"matcher\": \"Tool%d\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"check-%d\"\n          }\n        ]\n      }%s\n", i, i, sep)
	}
	b.WriteString("    ]\n  }\n}\n")
	return []byte(b.String())
}

func BenchmarkInstallLargeSettings(b *testing.B) {
	bin := benchBinary(b)
	type fig struct {
		lines      int
		wall       time.Duration
		rss, bytes int64
	}
	var figs []fig
	for _, lines := range []int{20000, 40000} {
		data := bigSettings(lines)
		var walls []time.Duration
		var rsss []int64
		for range benchRuns {
			dir := b.TempDir()
			proj, home := filepath.Join(dir, "proj"), filepath.Join(dir, "home")
			os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
			os.MkdirAll(filepath.Join(proj, ".claude"), 0o755)
			os.MkdirAll(home, 0o755)
			os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), data, 0o644)
			env := append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=")
			r := runChild(b, proj, env, nil, bin, "install", "claude")
			walls = append(walls, r.wall)
			rsss = append(rsss, r.maxRSS)
			if !strings.Contains(string(r.stdout), "update ") {
				b.Fatalf("install did not update the file:\n%s", r.stdout)
			}
		}
		f := fig{lines, median(walls), medianInt(rsss), int64(len(data))}
		figs = append(figs, f)
		b.Logf("%d lines (%d KB): wall %.1f ms, peak RSS %.2f MB", lines, f.bytes/1024, ms(f.wall), float64(f.rss)/1e6)
		b.ReportMetric(ms(f.wall), fmt.Sprintf("ms/%dlines", lines))
		b.ReportMetric(float64(f.rss)/1e6, fmt.Sprintf("MB/%dlines", lines))
	}
	b.ReportMetric(float64(figs[1].wall)/float64(figs[0].wall), "time-ratio-40k/20k")
	b.ReportMetric(float64(figs[1].rss)/float64(figs[0].rss), "rss-ratio-40k/20k")
	// --dry-run computes the diff (go-udiff) of the 20,000-line file.
	var walls []time.Duration
	var rsss []int64
	for range benchRuns {
		dir := b.TempDir()
		proj := filepath.Join(dir, "proj")
		os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
		os.MkdirAll(filepath.Join(proj, ".claude"), 0o755)
		os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), bigSettings(20000), 0o644)
		r := runChild(b, proj, append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="), nil, bin, "install", "claude", "--dry-run")
		walls, rsss = append(walls, r.wall), append(rsss, r.maxRSS)
	}
	b.Logf("20000 lines --dry-run: wall %.1f ms, peak RSS %.2f MB", ms(median(walls)), float64(medianInt(rsss))/1e6)
	b.ReportMetric(ms(median(walls)), "ms/dry-run-20000lines")
	b.ReportMetric(float64(medianInt(rsss))/1e6, "MB/dry-run-20000lines")
	if figs[0].wall > time.Second || figs[0].rss > 100e6 {
		b.Errorf("20,000 lines: %v and %.1f MB (goal: under 1 s and 100 MB)", figs[0].wall, float64(figs[0].rss)/1e6)
	}
}
