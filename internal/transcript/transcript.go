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

// walker calls fn with lines from the last to the first until it returns false.
type walker func(fn func(line []byte) bool) error

func fromFile[T any](path string, read func(walker) (T, error)) (T, error) {
	var zero T
	f, fi, err := agentfile.Open(path)
	if err != nil {
		return zero, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	size := fi.Size()
	if size == 0 {
		return zero, fmt.Errorf("%s: %w", path, ErrEmpty)
	}
	v, err := read(readerWalker(f, size))
	if err != nil {
		return zero, fmt.Errorf("read transcript %s: %w", path, err)
	}
	return v, nil
}

// readerWalker walks the first size bytes of r, back to lookback.
func readerWalker(r io.ReaderAt, size int64) walker {
	return func(fn func(line []byte) bool) error {
		s := NewReverseScanner(r, size)
		for s.Scan() {
			if size-s.Offset() > lookback || !fn(s.Bytes()) {
				break
			}
		}
		return s.Err()
	}
}

// joinText joins the text blocks that are not blank, one per line.
func joinText(parts []string) string {
	kept := slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return strings.TrimSpace(p) == "" })
	return strings.Join(kept, "\n")
}
