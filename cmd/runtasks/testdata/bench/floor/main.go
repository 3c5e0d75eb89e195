// Command floor is the benchmarks' floor for a stop hook (make bench,
// docs/benchmarks.md): a Go program that does only what any stop hook
// must do — read the hook's JSON on stdin, and the last 64 KB of the
// transcript it names — and answers. runtasks' own cost is compared with
// it. Built statically, as runtasks is.
package main

import (
	"encoding/json"
	"io"
	"os"
)

func main() {
	in, _ := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	var p struct {
		TranscriptPath string `json:"transcript_path"`
	}
	_ = json.Unmarshal(in, &p)
	n := 0
	if f, err := os.Open(p.TranscriptPath); err == nil {
		if st, err := f.Stat(); err == nil {
			buf := make([]byte, 64<<10)
			n, _ = f.ReadAt(buf, max(st.Size()-int64(len(buf)), 0))
		}
		f.Close()
	}
	out, _ := json.Marshal(map[string]any{"tail_bytes": n})
	os.Stdout.Write(append(out, '\n'))
}
