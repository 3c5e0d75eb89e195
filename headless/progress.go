package headless

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// IsTerminal reports whether w is a terminal (a character device), where
// progress is drawn as one live status line with a bar; elsewhere it is
// written as plain lines.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress shows a run: plain lines, or on a terminal one status line
// (cycle N/MAX, elapsed, bar of closed/total, the agent's current action)
// redrawn in place, with permanent lines printed above it.
type progress struct {
	mu    sync.Mutex
	out   io.Writer
	tty   bool
	now   func() time.Time
	start time.Time

	cycle, max    int
	closed, total int // the epic's descendants, now
	closedAtStart int
	action        string
	drawn         bool
}

// Elapsed formats a duration as m:ss or h:mm:ss.
func Elapsed(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
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
	n := done * width / total
	if n > width {
		n = width
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "]"
}

func (p *progress) head() string {
	return fmt.Sprintf("cycle %d/%d · %s", p.cycle, p.max, Elapsed(p.now().Sub(p.start)))
}

func (p *progress) tally() string {
	return fmt.Sprintf("%d/%d closed (%+d this run)", p.closed, p.total, p.closed-p.closedAtStart)
}

// status is the live line on a terminal.
func (p *progress) status() string {
	s := p.head() + " · " + Bar(p.closed, p.total, 20) + " " + p.tally()
	if p.action != "" {
		s += " · " + p.action
	}
	return oneLine(s, 160)
}

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

// Printf writes a permanent line.
func (p *progress) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.out, format+"\n", args...)
	p.redraw()
}

// Cycle starts cycle n.
func (p *progress) Cycle(n int) {
	p.mu.Lock()
	p.cycle, p.action = n, ""
	p.mu.Unlock()
}

// Action records the agent's current action: redrawn on a terminal, a
// plain line elsewhere (repeats are not printed twice).
func (p *progress) Action(a string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a == "" || a == p.action {
		return
	}
	p.action = a
	if p.tty {
		p.redraw()
		return
	}
	fmt.Fprintln(p.out, p.head()+" · "+oneLine(a, 120))
}

// Tally records the epic's closed/total.
func (p *progress) Tally(closed, total int) {
	p.mu.Lock()
	p.closed, p.total = closed, total
	p.redraw()
	p.mu.Unlock()
}

// Tick redraws the live line (the elapsed time moves).
func (p *progress) Tick() {
	p.mu.Lock()
	p.redraw()
	p.mu.Unlock()
}

// Done removes the live line.
func (p *progress) Done() {
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}
