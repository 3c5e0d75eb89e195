package headless

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// screen shows the workers of a run: on a terminal one live line per
// worker, redrawn in place (its latest line, cut to the width); elsewhere
// every line, prefixed with its worker ("w2 …").
type screen struct {
	mu    sync.Mutex
	out   io.Writer
	tty   bool
	width func() int
	lines []string
	part  [][]byte // a worker's unfinished line
	drawn bool
}

func newScreen(out io.Writer, tty bool, n int, width func() int) *screen {
	return &screen{out: out, tty: tty, width: width, lines: make([]string, n), part: make([][]byte, n)}
}

// slot is worker i's writer.
func (s *screen) slot(i int) io.Writer { return slotWriter{s, i} }

type slotWriter struct {
	s *screen
	i int
}

func (w slotWriter) Write(p []byte) (int, error) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := append(s.part[w.i], p...)
	for {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			break
		}
		line := Clean(string(buf[:nl]))
		buf = buf[nl+1:]
		if strings.TrimSpace(line) == "" {
			continue
		}
		s.lines[w.i] = line
		if !s.tty {
			fmt.Fprintf(s.out, "w%d %s\n", w.i+1, line)
		}
	}
	s.part[w.i] = append([]byte(nil), buf...)
	if s.tty {
		s.redraw()
	}
	return len(p), nil
}

func (s *screen) redraw() {
	cols := cols(s.width)
	var b strings.Builder
	if s.drawn {
		fmt.Fprintf(&b, "\x1b[%dA", len(s.lines))
	}
	for i, l := range s.lines {
		b.WriteString("\r\x1b[K" + Fit(fmt.Sprintf("w%d %s", i+1, l), cols-1) + "\n")
	}
	io.WriteString(s.out, b.String())
	s.drawn = true
}

// done leaves the last lines on the terminal.
func (s *screen) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tty && !s.drawn {
		s.redraw()
	}
}
