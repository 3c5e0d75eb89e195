// Package usage is runtasks' token accounting: the tokens a stop used, what
// they cost, and the sums status and report show.
package usage

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Tokens counts API usage. Input is neither read from nor written to the
// prompt cache; Output includes reasoning tokens.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
}

func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

func (t Tokens) Plus(u Tokens) Tokens {
	return Tokens{Input: t.Input + u.Input, Output: t.Output + u.Output,
		CacheRead: t.CacheRead + u.CacheRead, CacheWrite: t.CacheWrite + u.CacheWrite}
}

type ModelUsage struct {
	Model string `json:"model"`
	Tokens
}

// Usage is what the turns since the previous stop used, by model, from the
// agent's transcript (or runtasks run's result event).
type Usage struct {
	Models []ModelUsage
	// Partial: the read stopped at its cap; the sums are a lower bound.
	Partial bool
	// Entries are a transcript's responses, newest first, back to the stop
	// before the previous one (see Since).
	Entries []UsageEntry
	// Transcript: read from a transcript (no Entries: nothing written yet).
	Transcript bool
}

// UsageMark is where a usage read of the transcript Path ended; the next
// goes on from there.
type UsageMark struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	// Model is the model in use at Offset (Codex names it at a turn's start).
	Model string `json:"model,omitempty"`
}

// UsageReader reads what was written after from, and the mark to keep.
type UsageReader func(from UsageMark) (Usage, UsageMark, error)

// StartCursor is the cursor of a loop that stopped before any response was
// counted: the next stop counts every response it reads.
const StartCursor = "-"

// UsageEntry is one API response's usage; Earlier marks one written before
// the previous stop.
type UsageEntry struct {
	ID    string
	Model string
	Tokens
	Earlier bool
}

// Since is the usage to count at this stop: the responses newer than the
// last one counted (cursor), which catches one written only after the
// previous stop's hook ran; with a cursor not found, those since the
// previous stop. next is the cursor to keep ("" keeps the old one).
func (u Usage) Since(cursor string) (counted Usage, next string) {
	switch {
	case len(u.Entries) == 0 && u.Transcript && cursor == "": // nothing written yet
		return Usage{Partial: u.Partial}, StartCursor
	case len(u.Entries) == 0:
		return Usage{Models: u.Models, Partial: u.Partial}, ""
	}
	k := slices.IndexFunc(u.Entries, func(e UsageEntry) bool { return cursor != "" && e.ID == cursor })
	if cursor == StartCursor {
		k = len(u.Entries)
	}
	out := Usage{Partial: u.Partial && k < 0}
	for i, e := range u.Entries {
		if (k >= 0 && i >= k) || (k < 0 && e.Earlier) {
			break
		}
		out.Add(e.Model, e.Tokens)
	}
	return out, u.Entries[0].ID
}

func (u *Usage) Add(model string, t Tokens) {
	if i := slices.IndexFunc(u.Models, func(m ModelUsage) bool { return m.Model == model }); i >= 0 {
		u.Models[i].Tokens = u.Models[i].Tokens.Plus(t)
	} else {
		u.Models = append(u.Models, ModelUsage{Model: model, Tokens: t})
	}
}

// Spent is tokens and what they cost.
type Spent struct {
	Tokens
	Cost     float64  `json:"cost_usd,omitempty"`        // US dollars, of priced models
	Unpriced int64    `json:"unpriced_tokens,omitempty"` // tokens of models without a price
	Models   []string `json:"models,omitempty"`          // in the order first met
	Partial  bool     `json:"partial,omitempty"`         // a lower bound
}

func (s Spent) IsZero() bool {
	return s.Tokens == (Tokens{}) && s.Cost == 0 && s.Unpriced == 0 && len(s.Models) == 0 && !s.Partial
}

func (s Spent) Plus(o Spent) Spent {
	out := Spent{Tokens: s.Tokens.Plus(o.Tokens), Cost: s.Cost + o.Cost, Unpriced: s.Unpriced + o.Unpriced,
		Models: slices.Clone(s.Models), Partial: s.Partial || o.Partial}
	for _, m := range o.Models {
		if !slices.Contains(out.Models, m) {
			out.Models = append(out.Models, m)
		}
	}
	return out
}

// Price is what one model's tokens cost, in US dollars per million tokens
// (usage.prices). Model is a glob (path.Match: "claude-sonnet-4*").
type Price struct {
	Model      string  `koanf:"model" json:"model" rule:"glob"`
	Input      float64 `koanf:"input" json:"input" rule:"0..1e+06"`
	Output     float64 `koanf:"output" json:"output" rule:"0..1e+06"`
	CacheRead  float64 `koanf:"cache_read" json:"cache_read" rule:"0..1e+06"`
	CacheWrite float64 `koanf:"cache_write" json:"cache_write" rule:"0..1e+06"`
}

// PricesDate is when the shipped table was last checked against the
// providers' list prices (runtasks config show prints it).
const PricesDate = "2026-11-27"

// Prices is the shipped price table: the providers' list prices, first
// match wins. A project's usage.prices are checked before it.
var Prices = []Price{
	{"claude-opus-5-5*", 4, 20, 0.2, 5},
	{"claude-opus-5*", 5, 25, 0.5, 6.25},
	{"claude-sonnet-5*", 2, 10, 0.2, 2.5},
	{"claude-opus-4-5*", 5, 25, 0.5, 6.25},
	{"claude-opus-4*", 15, 75, 1.5, 18.75},
	{"claude-sonnet-4*", 3, 15, 0.3, 3.75},
	{"claude-3-7-sonnet*", 3, 15, 0.3, 3.75},
	{"claude-haiku-4*", 1, 5, 0.1, 1.25},
	{"claude-3-5-haiku*", 0.8, 4, 0.08, 1},
	{"gpt-5*-mini*", 0.25, 2, 0.025, 0},
	{"gpt-5*", 1.25, 10, 0.125, 0},
	{"gemini-2.5-pro*", 1.25, 10, 0.31, 0},
	{"gemini-2.5-flash*", 0.3, 2.5, 0.075, 0},
}

// price is the first of overrides, then of Prices, that matches model.
func price(overrides []Price, model string) (Price, bool) {
	for _, p := range slices.Concat(overrides, Prices) {
		if ok, _ := path.Match(p.Model, model); ok && model != "" {
			return p, true
		}
	}
	return Price{}, false
}

// Unpriced is the models that neither overrides nor Prices price, sorted, once each.
func Unpriced(overrides []Price, models []string) []string {
	un := slices.DeleteFunc(slices.Sorted(slices.Values(models)), func(m string) bool { _, ok := price(overrides, m); return ok })
	return slices.Compact(un)
}

// Spend prices a stop's usage (overrides first, then Prices); a model
// without a price is counted in tokens only.
func Spend(overrides []Price, u Usage) Spent {
	var s Spent
	for _, m := range u.Models {
		s.Tokens = s.Tokens.Plus(m.Tokens)
		if m.Model != "" && !slices.Contains(s.Models, m.Model) {
			s.Models = append(s.Models, m.Model)
		}
		p, ok := price(overrides, m.Model)
		if !ok {
			s.Unpriced += m.Total()
			continue
		}
		s.Cost += (float64(m.Input)*p.Input + float64(m.Output)*p.Output +
			float64(m.CacheRead)*p.CacheRead + float64(m.CacheWrite)*p.CacheWrite) / 1e6
	}
	s.Partial = u.Partial
	return s
}

// FormatTokens is a short token count: 950, 12.3k, 4.56M.
func FormatTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	}
	return trimZero(fmt.Sprintf("%.2f", float64(n)/1e6)) + "M"
}

// FormatCost is a dollar amount: $0.0123, $1.23, $1234.
func FormatCost(c float64) string {
	switch {
	case c < 1:
		return fmt.Sprintf("$%.4f", c)
	case c < 1000:
		return fmt.Sprintf("$%.2f", c)
	}
	return fmt.Sprintf("$%.0f", c)
}

func trimZero(s string) string { return strings.TrimSuffix(strings.TrimRight(s, "0"), ".") }
