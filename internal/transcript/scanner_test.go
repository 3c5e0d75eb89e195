package transcript

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

type scanned struct {
	Line    string
	Off     int64
	Partial bool
}

// scanAll runs a ReverseScanner over data.
func scanAll(t testing.TB, data []byte, chunk, maxLine int) []scanned {
	t.Helper()
	s := NewReverseScanner(bytes.NewReader(data), int64(len(data)), cmp.Or(maxLine, DefaultMaxLine))
	s.chunk, s.next = chunk, chunk
	var out []scanned
	for s.Scan() {
		out = append(out, scanned{string(s.Bytes()), s.Offset(), s.Partial()})
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
	return out
}

// forwardLines is the reference: split on '\n' reading forwards, drop
// lines longer than maxLine, return the result last line first.
func forwardLines(data []byte, maxLine int) []scanned {
	var out []scanned
	off := 0
	for off < len(data) {
		i := bytes.IndexByte(data[off:], '\n')
		partial := i < 0
		end := off + i
		if partial {
			end = len(data)
		}
		if end-off <= maxLine {
			out = append(out, scanned{string(data[off:end]), int64(off), partial})
		}
		off = end + 1
	}
	slices.Reverse(out)
	return out
}

func TestReverseScanner(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name  string
		data  string
		chunk int
		max   int
		want  []scanned
	}{
		{name: "empty", data: "", chunk: 4},
		{name: "one newline", data: "\n", chunk: 4, want: []scanned{{"", 0, false}}},
		{name: "terminated", data: "a\nbb\nccc\n", chunk: 2,
			want: []scanned{{"ccc", 5, false}, {"bb", 2, false}, {"a", 0, false}}},
		{name: "unterminated tail", data: "a\nbb\ncc", chunk: 3,
			want: []scanned{{"cc", 5, true}, {"bb", 2, false}, {"a", 0, false}}},
		{name: "blank lines", data: "\n\na\n\n", chunk: 1,
			want: []scanned{{"", 4, false}, {"a", 2, false}, {"", 1, false}, {"", 0, false}}},
		{name: "line longer than a chunk", data: "head\n" + long + "\ntail\n", chunk: 7, max: 1000,
			want: []scanned{{"tail", 106, false}, {long, 5, false}, {"head", 0, false}}},
		{name: "line at the cap", data: "a\n" + long + "\n", chunk: 8, max: 100,
			want: []scanned{{long, 2, false}, {"a", 0, false}}},
		{name: "line over the cap is skipped", data: "a\n" + long + "\nb\n", chunk: 8, max: 99,
			want: []scanned{{"b", 103, false}, {"a", 0, false}}},
		{name: "over-long first line", data: long + "\nb\n", chunk: 8, max: 10,
			want: []scanned{{"b", 101, false}}},
		{name: "over-long unterminated tail", data: "a\n" + long, chunk: 8, max: 10,
			want: []scanned{{"a", 0, false}}},
		{name: "over-long found within a chunk", data: "a\n" + long[:20] + "\n", chunk: 64, max: 10,
			want: []scanned{{"a", 0, false}}},
		{name: "two over-long lines", data: long + "\n" + long + "\nz", chunk: 16, max: 50,
			want: []scanned{{"z", 202, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scanAll(t, []byte(tt.data), tt.chunk, tt.max)
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestReverseScannerHugeLine reads a 5 MB line with the default buffers:
// the line comes back whole, and a cap below its size skips it.
func TestReverseScannerHugeLine(t *testing.T) {
	huge := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16)
	data := slices.Concat([]byte("first\n"), huge, []byte("\nlast\n"))
	s := NewReverseScanner(bytes.NewReader(data), int64(len(data)), DefaultMaxLine)
	var got [][]byte
	for s.Scan() {
		got = append(got, bytes.Clone(s.Bytes()))
	}
	if len(got) != 3 || string(got[0]) != "last" || !bytes.Equal(got[1], huge) || string(got[2]) != "first" {
		t.Fatalf("got %d lines, want last, the huge line, first", len(got))
	}
	if cap(s.buf) > 2*len(huge)+2*DefaultChunkSize {
		t.Errorf("buffer grew to %d bytes for a %d-byte line", cap(s.buf), len(huge))
	}

	s = NewReverseScanner(bytes.NewReader(data), int64(len(data)), 1<<20)
	var lines []string
	for s.Scan() {
		lines = append(lines, string(s.Bytes()))
	}
	if !slices.Equal(lines, []string{"last", "first"}) {
		t.Errorf("with a 1 MiB cap: lines %q; want [last first]", lines)
	}
	if cap(s.buf) > 1<<20+4*DefaultChunkSize {
		t.Errorf("with a 1 MiB cap the buffer grew to %d bytes", cap(s.buf))
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r     io.ReaderAt
	n     int64
	reads []int // the size of each read
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	c.reads = append(c.reads, len(p))
	return n, err
}

// TestReverseScannerReadsOnlyTheTail checks the cost is flat: the last
// line of a big file costs one chunk, whatever the file's size.
func TestReverseScannerReadsOnlyTheTail(t *testing.T) {
	var b bytes.Buffer
	for i := 0; b.Len() < 8<<20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	cr := &countingReader{r: bytes.NewReader(b.Bytes())}
	s := NewReverseScanner(cr, int64(b.Len()), DefaultMaxLine)
	for range 3 {
		if !s.Scan() {
			t.Fatal("Scan = false")
		}
	}
	if cr.n > DefaultChunkSize {
		t.Errorf("read %d bytes for the last 3 lines, want at most one chunk (%d)", cr.n, DefaultChunkSize)
	}
}

// TestReverseScannerReadsGrow: the first read is small (a stop's answer is
// most often in the last lines, and every page of a buffer faults when
// first filled), each next one twice the last, up to the chunk.
func TestReverseScannerReadsGrow(t *testing.T) {
	var b bytes.Buffer
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	cr := &countingReader{r: bytes.NewReader(b.Bytes())}
	s := NewReverseScanner(cr, int64(b.Len()), DefaultMaxLine)
	for s.Scan() && cr.n < 200<<10 {
	}
	want := []int{8 << 10, 16 << 10, 32 << 10, 64 << 10, 64 << 10}
	if len(cr.reads) < len(want) || !slices.Equal(cr.reads[:len(want)], want) {
		t.Errorf("reads of %v bytes, want them to start %v", cr.reads, want)
	}
}

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("disk on fire") }

func TestReverseScannerReadError(t *testing.T) {
	s := NewReverseScanner(failingReader{}, 10, DefaultMaxLine)
	if s.Scan() {
		t.Fatal("Scan = true on a failing reader")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Err = %v, want the read error", err)
	}
	// A file that shrank under the scanner is an error, not a short read.
	s = NewReverseScanner(strings.NewReader("abc\n"), 100, DefaultMaxLine)
	if s.Scan() || !errors.Is(s.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("shrunk file: Err = %v, want io.ErrUnexpectedEOF", s.Err())
	}
}

func FuzzReverseScanner(f *testing.F) {
	f.Add([]byte("a\nbb\nccc\n"), uint8(2), uint8(10))
	f.Add([]byte("a\n\n\nb"), uint8(1), uint8(1))
	f.Add([]byte(strings.Repeat("x", 300)+"\n"+strings.Repeat("y", 40)), uint8(7), uint8(50))
	f.Add([]byte("\n"), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, chunk, maxLine uint8) {
		c, m := int(chunk)%32+1, int(maxLine)%64+1
		got, want := scanAll(t, data, c, m), forwardLines(data, m)
		if !slices.Equal(got, want) {
			t.Fatalf("chunk %d max %d on %q:\n got %+v\nwant %+v", c, m, data, got, want)
		}
	})
}
