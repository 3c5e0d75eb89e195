package status

import "testing"

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
