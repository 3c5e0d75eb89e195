package usage

import (
	"math"
	"strings"
	"testing"
)

func usageOf(model string, in, out, cr, cw int64) Usage {
	return Usage{Models: []ModelUsage{{Model: model, Tokens: Tokens{Input: in, Output: out, CacheRead: cr, CacheWrite: cw}}}}
}

func TestSpend(t *testing.T) {
	prices := []Price{
		{Model: "claude-opus-4-5*", Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		{Model: "claude-opus-4*", Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	}
	tests := []struct {
		name     string
		u        Usage
		cost     float64
		unpriced int64
		models   []string
	}{
		// 1M of each kind at 4.5's prices: 5 + 25 + 0.5 + 6.25.
		{"first match wins", usageOf("claude-opus-4-5-20251101", 1e6, 1e6, 1e6, 1e6), 36.75, 0, []string{"claude-opus-4-5-20251101"}},
		{"the broader pattern", usageOf("claude-opus-4-1", 1000, 100, 0, 0), (1000*15 + 100*75) / 1e6, 0, []string{"claude-opus-4-1"}},
		{"unknown model: tokens only", usageOf("fake-model", 10, 5, 100, 0), 0, 115, []string{"fake-model"}},
		{"no model named", usageOf("", 10, 5, 0, 0), 0, 15, nil},
		{"two models", Usage{Models: []ModelUsage{
			{Model: "claude-opus-4-1", Tokens: Tokens{Output: 1e6}}, {Model: "gpt-x", Tokens: Tokens{Input: 7}}}},
			75, 7, []string{"claude-opus-4-1", "gpt-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spend(prices, tt.u)
			if math.Abs(s.Cost-tt.cost) > 1e-12 || s.Unpriced != tt.unpriced || strings.Join(s.Models, ",") != strings.Join(tt.models, ",") {
				t.Errorf("Spend = %+v, want cost %g, unpriced %d, models %v", s, tt.cost, tt.unpriced, tt.models)
			}
		})
	}
}

func TestFormatTokensAndCost(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1k", 12345: "12.3k", 4_560_000: "4.56M", 2_000_000: "2M"} {
		if got := FormatTokens(n); got != want {
			t.Errorf("FormatTokens(%d) = %q, want %q", n, got, want)
		}
	}
	for c, want := range map[float64]string{0: "$0.0000", 0.0123: "$0.0123", 1.234: "$1.23", 1234.4: "$1234"} {
		if got := FormatCost(c); got != want {
			t.Errorf("FormatCost(%g) = %q, want %q", c, got, want)
		}
	}
}

func TestUsageSince(t *testing.T) {
	e := func(id string, in int64, earlier bool) UsageEntry {
		return UsageEntry{ID: id, Model: "m", Tokens: Tokens{Input: in}, Earlier: earlier}
	}
	// Newest first: m5, m4 since the previous stop; m3 (written late,
	// after the previous stop's hook) and m2 before it.
	u := Usage{Entries: []UsageEntry{e("m5", 5, false), e("m4", 4, false), e("m3", 3, true), e("m2", 2, true)}}
	tests := []struct {
		cursor string
		want   int64
	}{
		{"m2", 12},        // the late m3 is counted now
		{"m3", 9},         // m3 was counted at the previous stop
		{"", 9},           // no cursor: since the previous stop
		{"gone", 9},       // a cursor not found: the same
		{"m5", 0},         // nothing new
		{StartCursor, 14}, // the previous stop counted nothing: all of it
	}
	for _, tt := range tests {
		got, next := u.Since(tt.cursor)
		var in int64
		for _, m := range got.Models {
			in += m.Input
		}
		if in != tt.want || next != "m5" {
			t.Errorf("Since(%q) = %d tokens, cursor %q; want %d, m5", tt.cursor, in, next, tt.want)
		}
	}
	// A transcript with nothing written yet: nothing counted, and the
	// next stop counts all it reads.
	if got, next := (Usage{Transcript: true}).Since(""); len(got.Models) != 0 || next != StartCursor {
		t.Errorf("empty transcript: %+v, %q", got, next)
	}
	if _, next := (Usage{Transcript: true}).Since("m3"); next != "" {
		t.Errorf("empty read keeps the cursor: %q", next)
	}
	// A run's result event has no entries: its models as they are.
	r := Usage{Models: []ModelUsage{{Model: "x", Tokens: Tokens{Output: 7}}}}
	if got, next := r.Since("m1"); len(got.Models) != 1 || got.Models[0].Output != 7 || next != "" {
		t.Errorf("Since without entries = %+v, %q", got, next)
	}
}

// TestSumAdd: a sum adds the stops' spending and counts them.
func TestSumAdd(t *testing.T) {
	var b Sum
	b.Add(Spent{Tokens: Tokens{Input: 1}, Cost: 0.5, Models: []string{"m1"}})
	b.Add(Spent{Tokens: Tokens{Input: 3}, Cost: 0.25, Models: []string{"m2"}, Partial: true})
	want := Sum{Spent: Spent{Tokens: Tokens{Input: 4}, Cost: 0.75, Models: []string{"m1", "m2"}, Partial: true}, Stops: 2}
	if b.Input != want.Input || b.Cost != want.Cost || strings.Join(b.Models, ",") != "m1,m2" || !b.Partial || b.Stops != 2 {
		t.Errorf("b = %+v; want %+v", b, want)
	}
}
