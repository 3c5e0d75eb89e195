package report

import (
	"fmt"
	"math"
	"time"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/usage"
)

// The charts' geometry, computed here so that the template only places numbers.
const (
	chartWidth = 960
	labelWidth = 170
	rightPad   = 24
	rowHeight  = 40
	axisHeight = 28
	barsHeight = 110
)

// Tick is one cycle on the timeline: a mark at (X, Y) on a line from Y1 to Y2.
type Tick struct {
	X, Y, Y1, Y2 float64
	Mark         Mark
	Title        string
}

// Row is one session's line on the timeline.
type Row struct {
	Label, Title string
	Y, X1, X2    float64
	Ticks        []Tick
}

// AxisLabel is a time label under the timeline.
type AxisLabel struct {
	X            float64
	Text, Anchor string
}

// Timeline is the SVG of the sessions' cycles over time; the axis labels
// stand at LabelY.
type Timeline struct {
	Width, Height, AxisY, LabelY float64
	Rows                         []Row
	Axis                         []AxisLabel
}

// Bar is one cycle's bar in a bar chart.
type Bar struct {
	X, Y, W, H float64
	Mark       Mark
	Title      string
}

// Bars is a bar chart, one bar per cycle; Max labels its top line.
type Bars struct {
	Width, Height, BaseY float64
	Bars                 []Bar
	Max, Caption         string
}

func (r Report) x(t time.Time) float64 {
	span := r.End.Sub(r.Start)
	inner := float64(chartWidth - labelWidth - rightPad)
	if span <= 0 {
		return labelWidth + inner/2
	}
	return labelWidth + inner*float64(t.Sub(r.Start))/float64(span)
}

// Timeline lays the sessions out as rows of ticks over the report's span.
func (r Report) Timeline() Timeline {
	tl := Timeline{Width: chartWidth}
	for i, s := range r.Sessions {
		y := float64(i)*rowHeight + rowHeight/2 + 6
		row := Row{Label: short(s.ID, 18), Title: s.ID + " (" + s.Agent + ")", Y: y, X1: rnd(r.x(s.Start)), X2: rnd(r.x(s.End))}
		for _, c := range s.Cycles {
			row.Ticks = append(row.Ticks, Tick{X: rnd(r.x(c.Time)), Y: y, Y1: y - 11, Y2: y + 11, Mark: c.Mark, Title: c.title(r.Loc)})
		}
		tl.Rows = append(tl.Rows, row)
	}
	tl.AxisY = float64(len(r.Sessions))*rowHeight + 12
	tl.LabelY, tl.Height = tl.AxisY+18, tl.AxisY+axisHeight
	if len(r.Cycles) > 0 {
		layout := "15:04"
		if r.End.Sub(r.Start) < 10*time.Minute {
			layout = "15:04:05"
		}
		if r.End.Sub(r.Start) >= 24*time.Hour || r.Start.In(r.Loc).YearDay() != r.End.In(r.Loc).YearDay() {
			layout = "Jan 2 15:04"
		}
		tl.Axis = []AxisLabel{{X: r.x(r.Start), Text: r.Start.In(r.Loc).Format(layout), Anchor: "start"}}
		if r.End.After(r.Start) {
			mid := r.Start.Add(r.End.Sub(r.Start) / 2)
			tl.Axis = append(tl.Axis,
				AxisLabel{X: rnd(r.x(mid)), Text: mid.In(r.Loc).Format(layout), Anchor: "middle"},
				AxisLabel{X: rnd(r.x(r.End)), Text: r.End.In(r.Loc).Format(layout), Anchor: "end"})
		}
	}
	return tl
}

// ClosedBars is the chart of tasks closed per cycle.
func (r Report) ClosedBars() Bars {
	return r.bars(func(c Cycle) float64 { return float64(c.Closed) },
		func(v float64) string { return fmt.Sprintf("%.0f", v) },
		func(c Cycle) string { return fmt.Sprintf("#%d %s: %d closed", c.Seq, c.Outcome, c.Closed) },
		"tasks closed per decision")
}

// TokenBars is the chart of tokens per cycle.
func (r Report) TokenBars() Bars {
	return r.bars(func(c Cycle) float64 { return float64(c.Spent.Total()) },
		func(v float64) string { return usage.FormatTokens(int64(v)) },
		func(c Cycle) string {
			if c.Usage == nil {
				return fmt.Sprintf("#%d %s: usage not recorded", c.Seq, c.Outcome)
			}
			return fmt.Sprintf("#%d %s: %s tokens, %s", c.Seq, c.Outcome, usage.FormatTokens(c.Spent.Total()), r.CostText(c.Spent))
		},
		"tokens per decision")
}

func (r Report) bars(value func(Cycle) float64, format func(float64) string, title func(Cycle) string, caption string) Bars {
	b := Bars{Width: chartWidth, Height: barsHeight + 20, BaseY: barsHeight, Caption: caption}
	top := 0.0
	for _, c := range r.Cycles {
		top = max(top, value(c))
	}
	b.Max = format(top)
	n := len(r.Cycles)
	if n == 0 {
		return b
	}
	inner := float64(chartWidth - labelWidth - rightPad)
	slot := inner / float64(n)
	w := max(min(slot*0.7, 28), 1)
	for i, c := range r.Cycles {
		h := 0.0
		if top > 0 {
			h = (barsHeight - 10) * value(c) / top
		}
		if value(c) > 0 {
			h = max(h, 1.5)
		}
		b.Bars = append(b.Bars, Bar{X: rnd(labelWidth + slot*float64(i) + (slot-w)/2), Y: rnd(barsHeight - h), W: rnd(w), H: rnd(h), Mark: c.Mark, Title: title(c)})
	}
	return b
}

func (c Cycle) title(loc *time.Location) string {
	s := fmt.Sprintf("#%d %s cycle %d: %s", c.Seq, c.Time.In(loc).Format("15:04:05"), c.Cycle, c.Outcome)
	if c.Closed > 0 {
		s += fmt.Sprintf(", %d closed", c.Closed)
	}
	if c.Why != "" {
		s += " — " + engine.OneLine(c.Why, 160)
	}
	return s
}

func short(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// rnd keeps two decimals of a coordinate.
func rnd(f float64) float64 { return math.Round(f*100) / 100 }
