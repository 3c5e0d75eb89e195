package transcript

import (
	"bytes"
	"fmt"
	"io"
)

const (
	// DefaultChunkSize is the most a ReverseScanner reads at a time. Reads
	// start at firstChunk and double: the answer is most often in the last
	// lines, and every page of a buffer costs a fault when first filled.
	DefaultChunkSize = 64 << 10
	firstChunk       = 8 << 10
	// DefaultMaxLine is the longest line a transcript read buffers.
	DefaultMaxLine = 16 << 20
)

// ReverseScanner reads a file's lines ('\n'-separated, without it) from the
// last to the first, in chunks, so reading the tail costs the same whatever
// the file's size. An unterminated last line comes first, with Partial set;
// a line longer than the maximum is skipped without being held in memory.
// It is used like bufio.Scanner (Scan, Bytes, Err).
type ReverseScanner struct {
	r             io.ReaderAt
	chunk, max    int
	next          int // the next read's size: doubling from firstChunk up to chunk
	buf           []byte
	lo            int   // buf[lo:] holds the bytes from base on not yielded yet
	base          int64 // buf[:lo] is room for the next read
	searched      int   // the pending bytes' tail known to hold no newline
	started, done bool  // done: the file's first line was yielded (or skipped)
	unterminated  bool  // the unterminated last line is still pending
	line          []byte
	off           int64
	partial       bool
	err           error
}

// NewReverseScanner returns a scanner over the first size bytes of r that
// skips lines longer than maxLine.
func NewReverseScanner(r io.ReaderAt, size int64, maxLine int) *ReverseScanner {
	return &ReverseScanner{r: r, chunk: DefaultChunkSize, next: firstChunk, max: maxLine, base: size}
}

// Scan advances to the previous line; false at the start of the file or on
// a read error.
func (s *ReverseScanner) Scan() bool {
	s.line = nil
	if !s.started {
		s.started = true
		if s.base == 0 || !s.fill() {
			return false
		}
		s.unterminated = s.buf[len(s.buf)-1] != '\n'
		if !s.unterminated {
			s.buf = s.buf[:len(s.buf)-1]
		}
	}
	for !s.done {
		pending := s.buf[s.lo:]
		i := bytes.LastIndexByte(pending[:len(pending)-s.searched], '\n')
		if i < 0 && s.base > 0 {
			s.searched = len(pending)
			if len(pending) > s.max {
				if !s.skipLong() {
					return false
				}
			} else if !s.fill() {
				return false
			}
			continue
		}
		// pending[i+1:] is a whole line: consume it with its newline.
		line, off, partial := pending[i+1:], s.base+int64(i+1), s.unterminated
		s.buf, s.searched, s.done, s.unterminated = s.buf[:s.lo+max(i, 0)], 0, i < 0, false
		if len(line) > s.max {
			continue
		}
		s.line, s.off, s.partial = line, off, partial
		return true
	}
	return false
}

// fill reads the chunk before base in front of the pending bytes, moving
// them to the end of a buffer grown when they fill half of it, so that the
// cost stays linear in the bytes read.
func (s *ReverseScanner) fill() bool {
	n := int(min(int64(s.next), s.base))
	s.next = min(2*s.next, s.chunk)
	if s.lo < n {
		used := len(s.buf) - s.lo
		size := cap(s.buf)
		if size-used < n || size-used < size/2 {
			size = max(2*size, used+n)
			// Never past the longest line plus a chunk or two; jump to that
			// size when doubling again would pass it.
			if ceil := s.max + 2*s.chunk; 2*size > ceil && ceil >= used+n {
				size = ceil
			}
		}
		nb := s.buf[:cap(s.buf)]
		if size != cap(s.buf) {
			nb = make([]byte, size)
		}
		copy(nb[size-used:], s.buf[s.lo:])
		s.buf, s.lo = nb, size-used
	}
	s.lo -= n
	s.base -= int64(n)
	return s.readAt(s.buf[s.lo:s.lo+n], s.base) // a failed read ends the scan
}

// skipLong drops the over-long line the pending bytes end, reading back
// through one chunk-sized window to the newline before it.
func (s *ReverseScanner) skipLong() bool {
	s.unterminated = false
	if cap(s.buf) < s.chunk || cap(s.buf) > 4*s.chunk {
		s.buf = make([]byte, s.chunk)
	}
	for s.base > 0 {
		n := int(min(int64(cap(s.buf)), s.base))
		w := s.buf[:n]
		if !s.readAt(w, s.base-int64(n)) {
			return false
		}
		s.base -= int64(n)
		if i := bytes.LastIndexByte(w, '\n'); i >= 0 {
			s.buf, s.lo, s.searched = w[:i], 0, 0
			return true
		}
	}
	s.buf, s.lo, s.done = s.buf[:0], 0, true
	return true
}

func (s *ReverseScanner) readAt(p []byte, off int64) bool {
	k, err := s.r.ReadAt(p, off)
	if k == len(p) {
		return true
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	s.err = fmt.Errorf("read at offset %d: %w", off, err)
	s.done = true
	return false
}

// Bytes returns the current line, valid until the next Scan.
func (s *ReverseScanner) Bytes() []byte { return s.line }

func (s *ReverseScanner) Offset() int64 { return s.off }

// Partial reports whether the current line is the unterminated last one
// (a writer may still be writing it).
func (s *ReverseScanner) Partial() bool { return s.partial }

func (s *ReverseScanner) Err() error { return s.err }
