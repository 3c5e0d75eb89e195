package claim

import (
	"slices"
	"testing"

	"github.com/runtasks/runtasks/orchestrator"
)

// The documented default patterns (defaults.yaml).
func defaultMatcher(t *testing.T) *Matcher {
	t.Helper()
	cfg, _, err := orchestrator.Load(orchestrator.LoadOptions{StartDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMatcher(cfg.Claim)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMatch(t *testing.T) {
	m := defaultMatcher(t)
	for _, tc := range []struct {
		prompt string
		want   Intent // zero: no intent
	}{
		{"claim bd-x7y8.3", Intent{KindClaim, "bd-x7y8.3"}},
		{"/claim bd-x7y8.3", Intent{KindClaim, "bd-x7y8.3"}},
		{"  Select bd-a1", Intent{KindClaim, "bd-a1"}},
		{"START bd-a1 now", Intent{KindClaim, "bd-a1"}},
		{"work on bd-x7y8.3.", Intent{KindClaim, "bd-x7y8.3"}},
		{"pick up bd-x7y8.3, then test it", Intent{KindClaim, "bd-x7y8.3"}},
		{"Work On my-proj-9z.1", Intent{KindClaim, "my-proj-9z.1"}},
		{"/run-tasks bd-x7y8", Intent{KindArm, "bd-x7y8"}},
		{"please run tasks for bd-x7y8", Intent{KindArm, "bd-x7y8"}},
		{"Run tasks under bd-x7y8 until done", Intent{KindArm, "bd-x7y8"}},
		// Ids mentioned without a claim verb at the start: no claim.
		{"what is bd-x7y8.3 about?", Intent{}},
		{"bd-x7y8.3 looks wrong, check it", Intent{}},
		{"don't start bd-x7y8 yet", Intent{}},
		{"I will work on bd-x7y8 tomorrow", Intent{}},
		{"claim", Intent{}},
		{"claim the lexer task", Intent{}},
		{"/run-tasks", Intent{}},
		{"", Intent{}},
	} {
		got, ok := m.Match(tc.prompt)
		if ok != (tc.want != Intent{}) || got != tc.want {
			t.Errorf("Match(%q) = %+v, %v; want %+v", tc.prompt, got, ok, tc.want)
		}
	}
}

func TestNewMatcherErrors(t *testing.T) {
	for _, c := range []orchestrator.Claim{
		{Patterns: []string{"claim ("}},
		{Patterns: []string{"claim bd-x"}},
		{ArmPatterns: []string{"[z-a]"}},
	} {
		if _, err := NewMatcher(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	m, err := NewMatcher(orchestrator.Claim{Patterns: []string{`^take (\S+)`}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := m.Match("take proj-1"); !ok || got.ID != "proj-1" {
		t.Errorf("first group as id: %+v", got)
	}
}

func TestChecklistAndRunID(t *testing.T) {
	got := Checklist("- one\n* two\n\n1. three\n- [ ] four\nfive")
	if !slices.Equal(got, []string{"one", "two", "three", "four", "five"}) {
		t.Errorf("Checklist = %q", got)
	}
	if a := Actor("", func(k string) string { return map[string]string{"USER": "u"}[k] }, "s/../x"); a != "u@s_.._x" {
		t.Errorf("Actor = %q", a)
	}
	if a := Actor("", nil, ""); a != "runtasks" {
		t.Errorf("Actor = %q", a)
	}
}
