package watch

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/status"
	"github.com/runtasks/runtasks/internal/usage"
)

// Changed tells the model the state directory changed: it reloads.
type Changed struct{}

type loaded struct {
	snap Snapshot
	err  error
}

type tick time.Time

// Model is the full-screen view: Load reads a snapshot, History a
// session's last decisions (enter), Now the time (the times since); Due
// (optional), checked each second, asks for a reload (a tracker read is due:
// bd changed between stops).
type Model struct {
	Load    func() (Snapshot, error)
	History func(session, epic string) []state.Record
	Now     func() time.Time
	Due     func(time.Time) bool

	snap          Snapshot
	err           error
	width, height int
	selected      int
	showReason    bool
	showHistory   bool
	scroll        int // the first line of the reason shown
}

// Init loads the first snapshot and starts the clock (times since).
func (m Model) Init() tea.Cmd { return tea.Batch(m.load, m.tick()) }

func (m Model) load() tea.Msg {
	s, err := m.Load()
	return loaded{s, err}
}

func (m Model) tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tick(t) })
}

// Update handles keys, reloads and the clock.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case loaded:
		m.snap, m.err = msg.snap, msg.err
		if m.selected >= len(m.snap.Rows) {
			m.selected = max(len(m.snap.Rows)-1, 0)
		}
	case Changed:
		return m, m.load
	case tick:
		if m.Due != nil && m.Due(time.Time(msg)) {
			return m, tea.Batch(m.load, m.tick())
		}
		return m, m.tick()
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			if msg.String() == "esc" && (m.showReason || m.showHistory) {
				m.showReason, m.showHistory = false, false
				return m, nil
			}
			return m, tea.Quit
		case "up", "k":
			if m.showReason {
				m.scroll = max(m.scroll-1, 0)
			} else {
				m.selected = max(m.selected-1, 0)
			}
		case "down", "j":
			if m.showReason {
				m.scroll++
			} else {
				m.selected = min(m.selected+1, max(len(m.snap.Rows)-1, 0))
			}
		case "w":
			m.showReason, m.showHistory, m.scroll = !m.showReason, false, 0
		case "enter":
			m.showHistory, m.showReason = !m.showHistory, false
		}
	}
	return m, nil
}

var (
	styleTitle  = lipgloss.NewStyle().Bold(true)
	styleAlert  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("1"))
	styleDim    = lipgloss.NewStyle().Faint(true)
	styleSelect = lipgloss.NewStyle().Reverse(true)
)

// View renders the screen: a title, the loops (those that need a person
// first, marked !), the selected loop's reason or history, the keys.
func (m Model) View() tea.View {
	width := cmp.Or(m.width, 80)
	now := m.Now()
	if m.showReason && m.selected < len(m.snap.Rows) {
		return m.reasonView(m.snap.Rows[m.selected], width)
	}
	var b strings.Builder
	title := fmt.Sprintf("runtasks · %d loop(s)", len(m.snap.Rows))
	if n := m.snap.NeedsPerson; n > 0 {
		title += " · " + styleAlert.Render(fmt.Sprintf("%d need(s) a person", n))
	}
	b.WriteString(styleTitle.Render(title) + "\n")
	if m.err != nil {
		b.WriteString(styleAlert.Render(cut("cannot read the state: "+m.err.Error(), width)) + "\n")
	}
	if len(m.snap.Rows) == 0 && len(m.snap.Runs) == 0 && m.err == nil {
		b.WriteString(styleDim.Render("No loop yet: arm a session (/run-tasks EPIC) or start runtasks run.") + "\n")
	}
	for i, r := range m.snap.Rows {
		line1, line2 := m.rowLines(r, width, now)
		if i == m.selected {
			line1 = styleSelect.Render(line1)
		}
		b.WriteString(line1 + "\n" + line2 + "\n")
	}
	if len(m.snap.Runs) > 0 {
		b.WriteString(styleTitle.Render(fmt.Sprintf("runtasks run · %d", len(m.snap.Runs))) + "\n")
		for _, r := range m.snap.Runs {
			b.WriteString(cutStyled(runLine(r, now, width), width) + "\n")
		}
	}
	if m.showHistory && m.History != nil && m.selected < len(m.snap.Rows) {
		sel := m.snap.Rows[m.selected]
		b.WriteString("\n" + styleTitle.Render("History of "+cut(sel.Session, 30)+" on "+sel.Epic+":") + "\n")
		for _, rec := range m.History(sel.Session, sel.Epic) {
			b.WriteString(cut(fmt.Sprintf("%s  %-13s %s  %s", rec.Time.In(time.Local).Format("15:04:05"), rec.Outcome, status.StopCell(rec.Block), rec.Why), width) + "\n")
		}
	}
	return m.screen(strings.Split(strings.TrimRight(b.String(), "\n"), "\n"), "q quit · ↑↓ select · enter history · w full reason", width)
}

// screen is lines and a footer, exactly the screen's height.
func (m Model) screen(lines []string, footer string, width int) tea.View {
	if m.height > 1 {
		lines = append(lines, make([]string, max(m.height-1-len(lines), 0))...)[:m.height-1]
	}
	v := tea.NewView(strings.Join(append(lines, styleDim.Render(cut(footer, width))), "\n"))
	v.AltScreen = true
	return v
}

// reasonView is the selected loop's whole reason (or, for a runtasks run
// session, the prompt its agent was given), wrapped to the width, scrolled.
func (m Model) reasonView(sel Row, width int) tea.View {
	head := "Last reason fed back to " + sel.Session + ":"
	if sel.Given {
		head = "Prompt " + sel.Session + "'s agent was given:"
	}
	text := strings.ReplaceAll(headless.Clean(cmp.Or(sel.LastReason, "(none: runtasks has not blocked this session)")), "\t", "    ")
	lines := strings.Split(ansi.Wrap(strings.TrimRight(text, "\n"), width, ""), "\n")
	lines = lines[min(m.scroll, len(lines)-1):]
	return m.screen(append(strings.Split(ansi.Wrap(styleTitle.Render(headless.Clean(head)), width, ""), "\n"), lines...), "w or esc back · ↑↓ scroll · q quit", width)
}

// rowLines renders one loop on two lines:
//
//	! s1  bd-a  [#####-----] 3/6  cycle 2/50  114.7k $0.04
//	  escalated · all remaining work is blocked · 3m ago · 1h2m · bd-a.1
func (m Model) rowLines(r Row, width int, now time.Time) (string, string) {
	l := r.last()
	mark, outcome := " ", string(l.Outcome)
	if r.NeedsPerson {
		mark, outcome = styleAlert.Render("!"), styleAlert.Render(outcome)
	}
	spent := "not recorded"
	if r.Spent.Total() > 0 {
		spent = usage.FormatTokens(r.Spent.Total())
		switch {
		case r.Spent.Cost > 0:
			spent += " " + usage.FormatCost(r.Spent.Cost)
		case r.Spent.Unpriced > 0:
			spent += " ?"
		}
	}
	id := idWidth(width)
	line1 := fmt.Sprintf("%s %-*s %-10s %s  %s  %s", mark, id, middle(r.Session, id), cut(r.Epic, 10), bar(r.Closed, r.Seen, 10), cycles(r.Count()), spent)
	parts := []string{outcome, l.Why}
	if !l.Time.IsZero() {
		parts = append(parts, ago(now.Sub(l.Time))+" ago")
	}
	if !r.FirstBlockAt.IsZero() {
		parts = append(parts, "running "+ago(now.Sub(r.FirstBlockAt)))
	}
	if len(r.Claims) > 0 {
		parts = append(parts, "claimed "+strings.Join(r.Claims, ","))
	}
	line2 := "  " + strings.Join(parts, " · ")
	return cutStyled(line1, width), cutStyled(line2, width)
}

func runLine(r headless.RunState, now time.Time, width int) string {
	mark, state := " ", "running "+ago(now.Sub(r.StartedAt))
	if r.Status == headless.StatusDead {
		mark, state = styleAlert.Render("!"), styleAlert.Render("dead")+": its runtasks process is gone"
	}
	return fmt.Sprintf("%s run %s %s %s  %s  %s %s", mark, middle(r.RunID, idWidth(width)+8), cut(r.Epic, 10), bar(r.Closed, r.Total, 10), cycles(r.Cycle, r.MaxCycles), cut(r.Agent, 8), state)
}

// cycles is "cycle N/MAX" ("cycle N" uncapped).
func cycles(n, max int) string {
	if max > 0 {
		return fmt.Sprintf("cycle %d/%d", n, max)
	}
	return fmt.Sprintf("cycle %d", n)
}

// bar is "[####------] 3/6" (closed of the most seen), or dots when the
// epic was never counted whole.
func bar(closed, seen, n int) string {
	if seen <= 0 {
		return "[" + strings.Repeat("·", n) + "] -"
	}
	return headless.Bar(closed, seen, n) + fmt.Sprintf(" %d/%d", closed, seen)
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(max(d, 0)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// cut makes s printable on one line and at most n cells wide.
func cut(s string, n int) string {
	return ansi.Truncate(strings.Join(strings.Fields(headless.Clean(s)), " "), n, "…")
}

// idWidth is the cells a session or run id gets: 12 at 80 columns, more
// on a wider terminal.
func idWidth(width int) int { return min(12+max(width-80, 0)/3, 36) }

// middle makes s printable and at most n cells wide, cut in the middle: the
// ends tell ids apart (a run's random suffix, a worker's -w2).
func middle(s string, n int) string {
	s = cut(s, len(s))
	r := []rune(s)
	if lipgloss.Width(s) <= n {
		return s
	}
	tail := (n - 1) * 2 / 3
	return string(r[:n-1-tail]) + "…" + string(r[len(r)-tail:])
}

// cutStyled cuts a line that holds styles to n cells.
func cutStyled(s string, n int) string {
	if lipgloss.Width(s) <= n {
		return s
	}
	return lipgloss.NewStyle().MaxWidth(n).Render(s)
}
