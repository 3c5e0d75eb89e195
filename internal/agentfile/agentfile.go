// Package agentfile reads files an agent controls: run-folder files
// (RESULTS.md, THOUGHTS.md), prompt templates, the targets of a `files`
// check, transcripts and the decision log. An agent can make any of them a
// FIFO (an open would block until a writer comes), a device such as
// /dev/zero (a read would never end) or a huge file; a hook that reads one
// of those hangs until the agent's timeout or runs out of memory.
//
// So every open here is non-blocking (O_NONBLOCK: a FIFO with no writer
// opens at once), the opened file is fstat'ed (no race between a check and
// the open), only a regular file is read, and a whole-file read stops at a
// cap. Anything else is an *Error naming the path and the problem, for the
// caller to report and to judge the stop without the file.
package agentfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Caps for whole-file reads (bytes). Tails (transcripts, the decision log)
// are read from the end and bounded by their readers instead.
const (
	// MaxText bounds the text files an agent writes or points runtasks at:
	// RESULTS.md, THOUGHTS.md, prompt templates, run-folder templates and
	// the targets of a `files` check.
	MaxText = 4 << 20
)

// ErrNotRegular is the kind of an *Error for a path that is not a regular
// file (a FIFO, a device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the kind of an *Error for a file larger than the cap.
var ErrTooLarge = errors.New("larger than the cap")

// Error is a file runtasks refused to read. errors.Is(err, ErrNotRegular)
// or errors.Is(err, ErrTooLarge) tells which.
type Error struct {
	Path string
	Kind error  // ErrNotRegular or ErrTooLarge
	why  string // "is a FIFO, not a regular file", "is larger than 10 bytes (11)"
}

func (e *Error) Error() string { return e.Path + " " + e.why + ": not read" }

// Is matches the kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// describe names a non-regular file mode.
func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file (" + m.Type().String() + ")"
}

// Open opens path for reading without blocking (a symbolic link is
// followed) and returns it with its fstat only when it is a regular file.
// A FIFO, a device, a socket or a directory is an *Error (ErrNotRegular);
// errors of the open itself are returned as os.Open's are (a missing file
// is fs.ErrNotExist).
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{path, ErrNotRegular, "is " + describe(fi.Mode()) + ", not a regular file"}
	}
	return f, fi, nil
}

// Read returns the content of the regular file at path, at most max bytes
// (MaxText when max is 0 or less). A larger file is an *Error
// (ErrTooLarge) and nothing of it is returned; a file that is not regular
// is an *Error (ErrNotRegular); a missing file is fs.ErrNotExist.
func Read(path string, max int64) ([]byte, error) {
	if max <= 0 {
		max = MaxText
	}
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, tooLarge(path, max, fi.Size())
	}
	// The file may grow between the fstat and the read: read one byte
	// more than the cap to tell. The buffer holds the size fstat gave, so
	// that a hook reads its files in one read each.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > max {
		return nil, tooLarge(path, max, max+1) // it grew past the cap while read
	}
	return data, nil
}

func tooLarge(path string, max, size int64) *Error {
	return &Error{path, ErrTooLarge, fmt.Sprintf("is larger than %d bytes (%d)", max, size)}
}
