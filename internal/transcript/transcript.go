// Package transcript reads agent transcripts (Claude Code, Codex, Gemini
// CLI) for what the agent itself said last and the tokens it used. Every
// reader walks backwards from the end with a ReverseScanner and stops as
// soon as it knows, so a stop costs the same on a short transcript and a
// huge one. Hook feedback (runtasks' own block reasons) is never the answer.
package transcript

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/agentfile"
)

var ErrEmpty = errors.New("transcript is empty")

// lookback bounds how far back a reader looks (bytes): a turn that long
// without assistant text yields none instead of a read of the whole file.
var lookback int64 = 64 << 20

// fromFile calls read with the transcript at path, a regular file not empty.
func fromFile[T any](path string, read func(r io.ReaderAt, size int64) (T, error)) (T, error) {
	var zero T
	f, fi, err := agentfile.Open(path)
	if err != nil {
		return zero, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	if fi.Size() == 0 {
		return zero, fmt.Errorf("%s: %w", path, ErrEmpty)
	}
	v, err := read(f, fi.Size())
	if err != nil {
		return zero, fmt.Errorf("read transcript %s: %w", path, err)
	}
	return v, nil
}

// walk calls fn with the lines of the first size bytes of r, from the last
// to the first and back to lookback, until fn returns false.
func walk(r io.ReaderAt, size int64, fn func(line []byte) bool) error {
	s := NewReverseScanner(r, size, DefaultMaxLine)
	for s.Scan() {
		if size-s.Offset() > lookback || !fn(s.Bytes()) {
			break
		}
	}
	return s.Err()
}

// joinText joins the text blocks that are not blank, one per line.
func joinText(parts []string) string {
	kept := slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return strings.TrimSpace(p) == "" })
	return strings.Join(kept, "\n")
}
