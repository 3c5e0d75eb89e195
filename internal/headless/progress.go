package headless

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (a live status line, not plain lines).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Width is w's width in columns when it is a terminal, else 0.
func Width(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil {
			return cols
		}
	}
	return 0
}

// DefaultWidth is the live line's width when the terminal does not say.
const DefaultWidth = 80

// progress shows a run: plain lines, or on a terminal one status line
// (cycle, elapsed, bar, the agent's action) redrawn in place under the
// permanent lines. The live line is cut to the terminal's width at every
// redraw, never wrapped, so a redraw never leaves a stale row.
type progress struct {
	mu    sync.Mutex
	out   io.Writer
	tty   bool
	now   func() time.Time
	start time.Time
	width func() int // the terminal's width now (0 = unknown: DefaultWidth)

	cycle, max    int
	closed, total int // the epic's descendants, now
	closedAtStart int
	action        string
	drawn         bool
}

// Elapsed formats a duration as m:ss or h:mm:ss.
func Elapsed(d time.Duration) string {
	s := max(int(d.Round(time.Second)/time.Second), 0)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// Bar draws done/total in width cells.
func Bar(done, total, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat("-", width) + "]"
	}
	n := min(done*width/total, width)
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "]"
}

func (p *progress) head() string {
	return fmt.Sprintf("cycle %d/%d · %s", p.cycle, p.max, Elapsed(p.now().Sub(p.start)))
}

func (p *progress) tally() string {
	return fmt.Sprintf("%d/%d closed (%+d this run)", p.closed, p.total, p.closed-p.closedAtStart)
}

// cols is the terminal's width now (DefaultWidth when width does not say).
func cols(width func() int) int {
	if width != nil {
		if w := width(); w > 0 {
			return w
		}
	}
	return DefaultWidth
}

// status is the live line on a terminal, cut to cols-1 columns (the last
// column stays free: some terminals wrap on writing it).
func (p *progress) status() string {
	cols := cols(p.width)
	bar := 20
	if cols < 100 {
		bar = 10
	}
	s := p.head() + " · " + Bar(p.closed, p.total, bar) + " " + p.tally()
	if p.action != "" {
		s += " · " + p.action
	}
	return Fit(oneLine(s, 1000), cols-1)
}

// Fit cuts a one-line, clean s to at most cols terminal columns, ending in "…".
func Fit(s string, cols int) string { return ansi.Truncate(s, cols, "…") }

func (p *progress) clear() {
	if p.tty && p.drawn {
		fmt.Fprint(p.out, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *progress) redraw() {
	if !p.tty {
		return
	}
	fmt.Fprint(p.out, "\r\x1b[K"+p.status())
	p.drawn = true
}

// around runs write (a log line) with the live line cleared.
func (p *progress) around(write func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	drawn := p.drawn
	p.clear()
	write()
	if drawn {
		p.redraw()
	}
}

// above writes log lines above the live lines (progress, screen): they are
// cleared first and drawn again after.
type above struct {
	live interface{ around(func()) }
	w    io.Writer
}

func (a above) Write(b []byte) (n int, err error) {
	a.live.around(func() { n, err = a.w.Write(b) })
	return n, err
}

// logAbove sends o.Log's lines above the live lines on a terminal.
func logAbove(o Options, live interface{ around(func()) }) {
	if o.TTY && o.LogOut != nil {
		o.Log.SetOutput(above{live, o.LogOut})
	}
}

// Printf writes a permanent line, cleaned (it may hold what an agent wrote).
func (p *progress) Printf(format string, args ...any) {
	p.around(func() { fmt.Fprintln(p.out, Clean(fmt.Sprintf(format, args...))) })
}

func (p *progress) Cycle(n, max int) {
	p.mu.Lock()
	p.cycle, p.max, p.action = n, max, ""
	p.mu.Unlock()
}

// Action shows the agent's current action (plain mode: a line, repeats
// skipped) or, busy, what runtasks itself is doing (on the live line only).
func (p *progress) Action(a string, busy bool) {
	a = oneLine(a, 200)
	p.mu.Lock()
	defer p.mu.Unlock()
	if a == "" || a == p.action {
		return
	}
	p.action = a
	p.redraw()
	if !p.tty && !busy {
		fmt.Fprintln(p.out, p.head()+" · "+oneLine(a, 120))
	}
}

func (p *progress) Tally(closed, total int) {
	p.mu.Lock()
	p.closed, p.total = closed, total
	p.redraw()
	p.mu.Unlock()
}

// Tick redraws the live line (the elapsed time moves) and returns the action it shows.
func (p *progress) Tick() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.redraw()
	return p.action
}

// Done removes the live line.
func (p *progress) Done() {
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}

// screen shows the workers of a run: on a terminal one live line per
// worker, redrawn in place; elsewhere every line, prefixed "w2 …".
type screen struct {
	mu    sync.Mutex
	out   io.Writer
	tty   bool
	width func() int
	lines []string
	drawn bool
}

func newScreen(out io.Writer, tty bool, n int, width func() int) *screen {
	return &screen{out: out, tty: tty, width: width, lines: make([]string, n)}
}

// slotWriter is worker i's output: its lines on the screen. Its writer,
// the worker's progress, writes whole lines.
type slotWriter struct {
	s *screen
	i int
}

func (w slotWriter) Write(p []byte) (int, error) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for line := range strings.Lines(string(p)) {
		if line = Clean(strings.TrimSuffix(line, "\n")); strings.TrimSpace(line) == "" {
			continue
		}
		s.lines[w.i] = line
		if !s.tty {
			fmt.Fprintf(s.out, "w%d %s\n", w.i+1, line)
		}
	}
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

// around runs write (a log line) with the live lines cleared.
func (s *screen) around(write func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tty && s.drawn {
		fmt.Fprintf(s.out, "\x1b[%dA\r\x1b[J", len(s.lines))
		s.drawn = false
		defer s.redraw()
	}
	write()
}
