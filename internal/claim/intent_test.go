package claim

import (
	"slices"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
)

// The documented default patterns (defaults.yaml).
func defaultMatcher(t *testing.T) *Matcher {
	t.Helper()
	cfg, _, err := config.Load(config.LoadOptions{StartDir: t.TempDir()})
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
		{"  /Run-Tasks bd-x7y8\n", Intent{KindArm, "bd-x7y8"}},
		// Claude Code namespaces the plugin's skill.
		{"/runtasks:run-tasks demo-90k", Intent{KindArm, "demo-90k"}},
		// Sentences that mention, quote or negate the request: nothing.
		{"Fix the typo. Do NOT run tasks for demo-2dm, that epic is not ready.", Intent{}},
		{"I will never run tasks under demo-7.", Intent{}},
		{"please run tasks for bd-x7y8", Intent{}},
		{"Run tasks under bd-x7y8 until done", Intent{}},
		{"Don't type /run-tasks demo-2dm yet", Intent{}},
		{"`/run-tasks demo-2dm` is how you start it", Intent{}},
		{"Fix the typo.\n/run-tasks demo-2dm", Intent{}},
		{"/other:run-tasks demo-2dm", Intent{}},
		// Ids mentioned without a claim verb at the start: no claim.
		{"what is bd-x7y8.3 about?", Intent{}},
		{"bd-x7y8.3 looks wrong, check it", Intent{}},
		{"don't start bd-x7y8 yet", Intent{}},
		{"I will work on bd-x7y8 tomorrow", Intent{}},
		{"claim", Intent{}},
		{"claim the lexer task", Intent{}},
		{"/run-tasks", Intent{}},
		{"", Intent{}},

		// The corpus: requests plainly meant arm or claim; a negation,
		// retraction, deferral or question anywhere arms and claims nothing.
		{"start app-s5e.2 after lunch, not now", Intent{}},
		{"claim app-s5e.2 — actually no, never mind", Intent{}},
		{"/run-tasks app-s5e? no wait, don't do that", Intent{}},
		{"/run-tasks app-s5e? ", Intent{}},
		{"/run-tasks app-s5e, never mind", Intent{}},
		{"/run-tasks app-s5e nevermind", Intent{}},
		{"/run-tasks app-s5e — wait", Intent{}},
		{"/run-tasks app-s5e\nactually, hold on", Intent{}},
		{"/run-tasks app-s5e no", Intent{}},
		{"claim bd-a1? or bd-a2", Intent{}},
		{"claim bd-a1 — no, bd-a2", Intent{}},
		{"claim bd-a1 NOT", Intent{}},
		{"claim bd-a1, scratch that", Intent{}},
		{"claim bd-a1 — cancel that", Intent{}},
		{"claim bd-a1, don’t close it", Intent{}},
		{"claim bd-a1 but dont touch the docs", Intent{}},
		{"work on bd-a1; I can't review it today", Intent{}},
		{"work on bd-a1, nor bd-a2", Intent{}},
		{"start bd-a1 later", Intent{}},
		{"start bd-a1 tomorrow", Intent{}},
		{"start bd-a1 — never", Intent{}},
		{"select bd-a1 or forget it", Intent{}},
		{"select bd-a1, ignore the other one", Intent{}},
		{"pick up bd-a1, undo the last claim", Intent{}},
		{"pick up bd-a1, nope", Intent{}},
		{"/run-tasks app-s5e", Intent{KindArm, "app-s5e"}},
		{"/run-tasks app-s5e.1", Intent{KindArm, "app-s5e.1"}},
		{"/run-tasks app-s5e please", Intent{KindArm, "app-s5e"}},
		{"/run-tasks app-s5e, then report back", Intent{KindArm, "app-s5e"}},
		{"claim bd-a1 now", Intent{KindClaim, "bd-a1"}},
		{"claim bd-a1. Thanks!", Intent{KindClaim, "bd-a1"}},
		{"claim bd-a1 (the lexer)", Intent{KindClaim, "bd-a1"}},
		{"start bd-a1 and run the tests", Intent{KindClaim, "bd-a1"}},
		{"work on bd-a1: the lexer first", Intent{KindClaim, "bd-a1"}},
		{"Work on bd-a1 and bd-a2", Intent{KindClaim, "bd-a1"}},
		{"pick up bd-a1 after the build is green", Intent{KindClaim, "bd-a1"}},
		// Words are whole words: "knowledge", "notes", "nothing" and
		// "cannon" negate nothing; an id is not a word of the sentence.
		{"start bd-a1 — knowledge is power", Intent{KindClaim, "bd-a1"}},
		{"start bd-a1 with notes", Intent{KindClaim, "bd-a1"}},
		{"start bd-a1, then nothing else", Intent{KindClaim, "bd-a1"}},
		{"select bd-a1, the cannon task", Intent{KindClaim, "bd-a1"}},
		{"claim wait-3", Intent{KindClaim, "wait-3"}},
		{"/run-tasks no-9", Intent{KindArm, "no-9"}},
	} {
		got, ok := m.Match(tc.prompt)
		if ok != (tc.want != Intent{}) || got != tc.want {
			t.Errorf("Match(%q) = %+v, %v; want %+v", tc.prompt, got, ok, tc.want)
		}
	}
}

func TestNewMatcherErrors(t *testing.T) {
	for _, c := range []config.Claim{
		{Patterns: []string{"claim ("}},
		{Patterns: []string{"claim bd-x"}},
		{ArmPatterns: []string{"[z-a]"}},
	} {
		if _, err := NewMatcher(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	m, err := NewMatcher(config.Claim{Patterns: []string{`^take (\S+)`}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := m.Match("take proj-1"); !ok || got.ID != "proj-1" {
		t.Errorf("first group as id: %+v", got)
	}
}

// TestMatchConfiguredPatternsOnlyAtStart: a configured pattern without ^,
// or one that matches later lines with (?m), counts only at the prompt's
// start.
func TestMatchConfiguredPatternsOnlyAtStart(t *testing.T) {
	m, err := NewMatcher(config.Claim{
		ArmPatterns: []string{`(?i)drive (?P<id>[a-z]+-[0-9]+)`, `(?m)^go (?P<id>[a-z]+-[0-9]+)`},
		Patterns:    []string{`take (?P<id>[a-z]+-[0-9]+)`},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prompt string
		want   Intent
	}{
		{"Drive proj-1", Intent{KindArm, "proj-1"}},
		{"\t drive proj-1 now", Intent{KindArm, "proj-1"}},
		{"please drive proj-1", Intent{}},
		{"never drive proj-1", Intent{}},
		{"go proj-2", Intent{KindArm, "proj-2"}},
		{"first this\ngo proj-2", Intent{}},
		{"take proj-3", Intent{KindClaim, "proj-3"}},
		{"do not take proj-3", Intent{}},
	} {
		got, ok := m.Match(tc.prompt)
		if ok != (tc.want != Intent{}) || got != tc.want {
			t.Errorf("Match(%q) = %+v, %v; want %+v", tc.prompt, got, ok, tc.want)
		}
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

// The arming answer names what is driven and until when, and never tells
// the model how to release the session: the loop is the person's.
func TestArmText(t *testing.T) {
	for _, tc := range []struct {
		is   beads.Issue
		want string
	}{
		{beads.Issue{ID: "bd-e", Title: "Ship", IssueType: beads.TypeEpic}, "drives epic bd-e"},
		{beads.Issue{ID: "bd-e.2", Title: "Lexer", IssueType: "task"}, "blocks until beads shows bd-e.2 itself closed"},
	} {
		got := ArmText(tc.is, "Ready now: none.", "PROMPT")
		if !strings.Contains(got, tc.want) || !strings.HasSuffix(got, "\n\nPROMPT") || strings.Contains(got, "disarm") {
			t.Errorf("ArmText(%s): %s", tc.is.ID, got)
		}
	}
}
