package transcript

import (
	"bytes"
	"fmt"
	"io"
)

const (
	// DefaultChunkSize is the most a ReverseScanner reads at a time. Its
	// first read is firstChunk (or less), and each read doubles the last:
	// a stop hook's answer is most often in the file's last lines, and a
	// buffer's every page costs a page fault when it is first filled.
	DefaultChunkSize = 64 << 10
	// firstChunk is the size of the first read.
	firstChunk = 8 << 10
	// DefaultMaxLine is the longest line a ReverseScanner buffers; longer
	// lines are skipped.
	DefaultMaxLine = 16 << 20
)

// ReverseScanner reads the lines of a file from the last to the first,
// reading backwards in chunks, so the cost of reading the tail does not
// depend on the size of the file. Lines are split on '\n' only; the newline
// is not part of the line. A file that does not end in a newline yields its
// unterminated tail first, with Partial set. A line longer than the maximum
// is skipped (see Skipped) without being held in memory.
//
// Use it like bufio.Scanner:
//
//	s := NewReverseScanner(f, size)
//	for s.Scan() {
//		line := s.Bytes()
//	}
//	if err := s.Err(); err != nil { … }
type ReverseScanner struct {
	r     io.ReaderAt
	chunk int
	max   int
	next  int // the next read's size: doubling from firstChunk up to chunk

	// buf[lo:hi] holds the file bytes [base, limit): the unconsumed
	// bytes read so far. Everything from limit on has been yielded.
	buf   []byte
	lo    int
	hi    int
	base  int64
	limit int64

	line    []byte
	off     int64
	partial bool
	first   bool
	skipped int
	err     error
	started bool
}

// NewReverseScanner returns a scanner over the first size bytes of r.
func NewReverseScanner(r io.ReaderAt, size int64) *ReverseScanner {
	return &ReverseScanner{r: r, chunk: DefaultChunkSize, max: DefaultMaxLine,
		base: size, limit: size, first: true}
}

// Buffer sets the read size and the longest line kept (in bytes, without
// the newline). It must be called before the first Scan; values below 1
// keep the defaults.
func (s *ReverseScanner) Buffer(chunk, maxLine int) {
	if s.started {
		panic("transcript: Buffer called after Scan")
	}
	if chunk > 0 {
		s.chunk = chunk
	}
	if maxLine > 0 {
		s.max = maxLine
	}
}

// Scan advances to the previous line. It returns false at the start of the
// file or on a read error.
func (s *ReverseScanner) Scan() bool {
	s.started = true
	s.line = nil
	if s.err != nil {
		return false
	}
	for s.limit > 0 {
		end := s.limit // exclusive end of the line, newline included
		s.partial = false
		if s.first {
			s.first = false
			if err := s.fill(); err != nil {
				return false
			}
			if s.buf[s.hi-1] != '\n' {
				s.partial = true
			}
		}
		contentEnd := end
		if !s.partial {
			contentEnd--
		}
		// Search the buffered bytes, then older chunks, for the newline
		// before the line. Only bytes not searched yet are searched.
		searchEnd := contentEnd
		for {
			from := s.lo
			to := s.lo + int(searchEnd-s.base)
			start := int64(-1)
			if i := bytes.LastIndexByte(s.buf[from:to], '\n'); i >= 0 {
				start = s.base + int64(i) + 1
			} else if s.base == 0 {
				start = 0
			}
			if start >= 0 {
				s.yield(start, contentEnd)
				if contentEnd-start > int64(s.max) {
					s.line = nil
					s.skipped++
					break
				}
				return true
			}
			if contentEnd-s.base > int64(s.max) {
				if !s.skipLong() {
					return false
				}
				break // the long line is skipped; look at the one before it
			}
			searchEnd = s.base
			if err := s.fill(); err != nil {
				return false
			}
		}
	}
	return false
}

// yield makes file bytes [start, end) the current line and consumes them
// along with their newline.
func (s *ReverseScanner) yield(start, end int64) {
	i := s.lo + int(start-s.base)
	s.line = s.buf[i : s.lo+int(end-s.base)]
	s.off = start
	s.limit = start
	s.hi = i
}

// fill reads the chunk before base into the buffer, growing or compacting
// it so the cost stays linear in the bytes read.
func (s *ReverseScanner) fill() error {
	if s.next == 0 {
		s.next = min(firstChunk, s.chunk)
	}
	n := int64(s.next)
	s.next = min(2*s.next, s.chunk)
	if s.base < n {
		n = s.base
	}
	if s.lo < int(n) {
		used := s.hi - s.lo
		size := len(s.buf)
		if size-used < int(n) || size-used < size/2 {
			size = max(2*size, used+int(n))
			// Never past the longest line plus a chunk or two; jump to that
			// size when doubling again would pass it.
			if ceil := s.max + 2*s.chunk; 2*size > ceil && ceil >= used+int(n) {
				size = ceil
			}
		}
		nb := s.buf
		if size != len(s.buf) {
			nb = make([]byte, size)
		}
		copy(nb[size-used:], s.buf[s.lo:s.hi])
		s.buf, s.lo, s.hi = nb, size-used, size
	}
	start := s.lo - int(n)
	if err := s.readAt(s.buf[start:s.lo], s.base-n); err != nil {
		return err
	}
	s.lo = start
	s.base -= n
	return nil
}

func (s *ReverseScanner) readAt(p []byte, off int64) error {
	k, err := s.r.ReadAt(p, off)
	if k == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	s.err = fmt.Errorf("read at offset %d: %w", off, err)
	return s.err
}

// skipLong drops the over-long line that ends the buffered bytes: it reads
// backwards through a single chunk-sized window to the newline before it,
// and keeps the bytes before that newline buffered.
func (s *ReverseScanner) skipLong() bool {
	s.skipped++
	s.hi = s.lo
	if len(s.buf) < s.chunk || len(s.buf) > 4*s.chunk {
		s.buf = make([]byte, s.chunk)
	}
	for s.base > 0 {
		n := int64(len(s.buf))
		if s.base < n {
			n = s.base
		}
		w := s.buf[:n]
		if err := s.readAt(w, s.base-n); err != nil {
			return false
		}
		s.base -= n
		if i := bytes.LastIndexByte(w, '\n'); i >= 0 {
			s.lo, s.hi = 0, i+1
			s.limit = s.base + int64(i) + 1
			return true
		}
	}
	s.lo, s.hi, s.limit = 0, 0, 0
	return true
}

// Bytes returns the current line. The slice is valid until the next Scan.
func (s *ReverseScanner) Bytes() []byte { return s.line }

// Offset returns the file offset at which the current line starts.
func (s *ReverseScanner) Offset() int64 { return s.off }

// Partial reports whether the current line is the file's last and has no
// newline: a writer may still be writing it.
func (s *ReverseScanner) Partial() bool { return s.partial }

// Skipped returns how many over-long lines were skipped so far.
func (s *ReverseScanner) Skipped() int { return s.skipped }

// Err returns the first read error.
func (s *ReverseScanner) Err() error { return s.err }
