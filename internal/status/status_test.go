package status

import (
	"fmt"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

func TestCell(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"", 10, "-"},
		{"abc", 10, "abc"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefghi…"},
		{"a\tb\nc\x1b]0;t\x07d\x1b[2J\x7f", 10, "a?b?cd"},
		{"ünïcödé😀", 10, "ünïcödé😀"},
		{"ünïcödé😀xyz", 8, "ünïcödé…"},
		{"abc     def", 6, "abc…"},
	}
	for _, tt := range tests {
		if got := Cell(tt.in, tt.n); got != tt.want {
			t.Errorf("Cell(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestRollup: sums per (session, epic), epic and claimed task, in the order
// first met, stops counted; records without usage are not stops.
func TestRollup(t *testing.T) {
	spent := func(in int64, unpriced int64) *usage.Spent {
		return &usage.Spent{Tokens: usage.Tokens{Input: in}, Unpriced: unpriced}
	}
	recs := []state.Record{
		{Session: "s1", Epic: "bd-b", Task: "bd-b.1", Usage: spent(1, 0)},
		{Session: "s2", Epic: "bd-a", Usage: spent(2, 2)},
		{Session: "s1", Epic: "bd-b"},
		{Session: "s1", Epic: "bd-b", Task: "bd-b.2", Usage: spent(3, 0)},
		{Session: "s3", Epic: "bd-c", Task: "bd-b.1", Usage: spent(4, 0)},
	}
	sessions, epics, tasks := Rollup(recs)
	var got []string
	for _, r := range epics {
		got = append(got, fmt.Sprintf("%s=%d/%d", r.Epic, r.Input, r.Stops))
	}
	for _, r := range tasks {
		got = append(got, fmt.Sprintf("%s:%s=%d/%d", r.Epic, r.Task, r.Input, r.Stops))
	}
	if want := "bd-b=4/2 bd-a=2/1 bd-c=4/1 bd-b:bd-b.1=5/2 bd-b:bd-b.2=3/1"; strings.Join(got, " ") != want {
		t.Errorf("rows %v, want %s", got, want)
	}
	if s := sessions[[2]string{"s1", "bd-b"}]; s == nil || s.Input != 4 || s.Stops != 2 {
		t.Errorf("s1 on bd-b = %+v", s)
	}
	if s := sessions[[2]string{"s2", "bd-a"}]; s == nil || s.Unpriced != 2 || s.Stops != 1 {
		t.Errorf("s2 on bd-a = %+v", s)
	}
	if s := sessions[[2]string{"s1", "bd-a"}]; s != nil {
		t.Errorf("a pair never met has a sum: %+v", s)
	}
}
