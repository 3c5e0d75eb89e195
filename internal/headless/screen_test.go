package headless

import (
	"bytes"
	"strings"
	"testing"
)

func TestScreen(t *testing.T) {
	t.Run("plain: every line, prefixed, cleaned", func(t *testing.T) {
		var out bytes.Buffer
		s := newScreen(&out, false, 2, nil)
		w1, w2 := slotWriter{s, 0}, slotWriter{s, 1}
		w2.Write([]byte("cycle 1 · waiting\n"))
		w1.Write([]byte("cycle 1 · claimed x-1\x1b[31m\n\n"))
		want := "w2 cycle 1 · waiting\nw1 cycle 1 · claimed x-1\n"
		if out.String() != want {
			t.Errorf("output %q, want %q", out.String(), want)
		}
	})
	t.Run("terminal: one line per worker, redrawn in place, cut to the width", func(t *testing.T) {
		var out bytes.Buffer
		s := newScreen(&out, true, 3, func() int { return 20 })
		slotWriter{s, 1}.Write([]byte("cycle 2 · a very long line that does not fit\n"))
		first := out.String()
		if strings.Contains(first, "\x1b[3A") || strings.Count(first, "\n") != 3 {
			t.Fatalf("first draw %q: want 3 lines, no cursor move", first)
		}
		out.Reset()
		slotWriter{s, 0}.Write([]byte("cycle 1 · done\n"))
		second := out.String()
		if !strings.HasPrefix(second, "\x1b[3A") {
			t.Fatalf("redraw %q does not move up 3 lines", second)
		}
		lines := strings.Split(strings.TrimSuffix(second[len("\x1b[3A"):], "\n"), "\n")
		want := []string{"\r\x1b[Kw1 cycle 1 · done", "\r\x1b[Kw2 cycle 2 · a ver…", "\r\x1b[Kw3 "}
		if strings.Join(lines, "|") != strings.Join(want, "|") {
			t.Errorf("lines %q, want %q", lines, want)
		}
	})
}
