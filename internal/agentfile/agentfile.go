// Package agentfile reads files an agent controls (run-folder files,
// templates, a files check's targets, transcripts, the decision log). An
// agent can make one a FIFO (an open blocks), a device (a read never ends)
// or a huge file; so every open is non-blocking, the opened file is
// fstat'ed, only a regular file is read, and a whole-file read stops at a
// cap. Anything else is an *Error naming the path and the problem.
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

// MaxText bounds a whole-file read of a text file an agent writes or
// points runtasks at (tails are bounded by their readers).
const MaxText = 4 << 20

// The kinds of an *Error.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("larger than the cap")
)

// Error is a file runtasks refused to read; errors.Is tells its Kind.
type Error struct {
	Path string
	Kind error  // ErrNotRegular or ErrTooLarge
	why  string // "is a FIFO, not a regular file", "is larger than 10 bytes (11)"
}

func (e *Error) Error() string { return e.Path + " " + e.why + ": not read" }

func (e *Error) Is(target error) bool { return target == e.Kind }

// describe names the mode of an open file that is not regular (never a
// link, followed by the open, nor a socket, which open refuses).
func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file (" + m.Type().String() + ")"
}

// Open opens path (following a link) without blocking and returns it with
// its fstat when it is a regular file, else an *Error (ErrNotRegular); the
// open's own errors are os.Open's.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &Error{path, ErrNotRegular, "is " + describe(fi.Mode()) + ", not a regular file"}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Read returns the content of the regular file at path, at most max bytes:
// a larger file is an *Error (ErrTooLarge).
func Read(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, tooLarge(path, max, fi.Size())
	}
	// One byte more than the cap tells a file that grew since the fstat;
	// the buffer takes the fstat's size, for one read.
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
