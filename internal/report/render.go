package report

import (
	_ "embed"
	"html/template"
	"io"
	"time"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/usage"
)

//go:embed page.html.tmpl
var pageText string

// Render writes r as one self-contained HTML page: inline CSS and SVG, no
// script, nothing fetched.
func Render(w io.Writer, r Report) error {
	t, err := template.New("page").Funcs(template.FuncMap{
		"fmtTime": func(t time.Time) string { return t.In(r.Loc).Format("2006-01-02 15:04 MST") },
		"clock": func(t time.Time) string {
			if r.End.Sub(r.Start) >= 20*time.Hour {
				return t.In(r.Loc).Format("Jan 2 15:04")
			}
			return t.In(r.Loc).Format("15:04:05")
		},
		"zone": func() string {
			if z := r.Loc.String(); z != "Local" {
				return z
			}
			return r.Generated.In(r.Loc).Format("MST")
		},
		"title":  func(id string) string { return engine.OneLine(r.Titles[id], 80) },
		"dur":    FormatDuration,
		"tokens": usage.FormatTokens,
		"cost":   r.CostText,
		"short":  func(s string) string { return short(s, 14) },
		"radius": func(m Mark) float64 {
			if m == MarkCycle {
				return 3
			}
			return 6
		},
	}).Parse(pageText)
	if err != nil {
		return err
	}
	return t.Execute(w, r)
}
