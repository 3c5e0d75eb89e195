package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
)

// BenchmarkPreToolHookNonClose: what the pre-tool gate adds to a shell
// call that closes nothing (issue 33: parse and allow in under 20 ms),
// the whole hook process as the agent runs it, and the recogniser alone.
func BenchmarkPreToolHookNonClose(b *testing.B) {
	bin := benchBinary(b)
	dir := b.TempDir()
	line := "go test ./... 2>&1 | tail -20 && git add -A && git commit -m 'parser: bd close comes later' # " + strings.Repeat("x", 2000)
	in, _ := json.Marshal(map[string]any{"session_id": "bench", "cwd": dir, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": line}})
	for i := 0; i < b.N; i++ {
		var hook, floor []time.Duration
		for r := 0; r < benchRuns*4; r++ {
			h := runChild(b, dir, nil, in, bin, "pre-tool-hook")
			if len(h.stdout) != 0 {
				b.Fatalf("pre-tool-hook answered a call that closes nothing: %s", h.stdout)
			}
			hook = append(hook, h.wall)
			floor = append(floor, runChild(b, dir, nil, nil, bin, "version").wall)
		}
		start, n := time.Now(), 10000
		for range n {
			if beads.ClosedBy(line) != nil {
				b.Fatal("a close recognised")
			}
		}
		b.ReportMetric(ms(median(hook)), "pre-tool-hook-ms")
		b.ReportMetric(ms(median(floor)), "version-ms")
		b.ReportMetric(float64(time.Since(start).Microseconds())/float64(n), "recognise-us")
		if median(hook) > 20*time.Millisecond {
			b.Errorf("the gate took %v on a call that closes nothing, want under 20ms", median(hook))
		}
	}
}
