// Package claim claims beads tasks for agent sessions and arms sessions for
// epics: it recognises the intent in a prompt (claim.patterns,
// claim.arm_patterns), loads a task's hierarchy from beads, claims it
// atomically for the session, writes the run folder and renders the context
// injected into the agent. It runs bd only through package beads.
package claim

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/runtasks/runtasks/internal/config"
)

// Intent kinds.
const (
	// KindClaim: the prompt claims a task ("claim bd-x7y8.3").
	KindClaim = "claim"
	// KindArm: the prompt arms the session for an epic ("/run-tasks bd-x7y8").
	KindArm = "arm"
)

// Intent is what a prompt asks runtasks to do.
type Intent struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// Matcher recognises claims and arming requests in prompts.
type Matcher struct {
	claim, arm []*regexp.Regexp
}

// NewMatcher compiles the configured patterns. Each must have a group named
// id, or at least one group (the first is the id).
func NewMatcher(c config.Claim) (*Matcher, error) {
	m := &Matcher{}
	var err error
	if m.claim, err = compile("claim.patterns", c.Patterns); err != nil {
		return nil, err
	}
	if m.arm, err = compile("claim.arm_patterns", c.ArmPatterns); err != nil {
		return nil, err
	}
	return m, nil
}

func compile(key string, pats []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for i, p := range pats {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
		}
		if re.NumSubexp() == 0 {
			return nil, fmt.Errorf("%s[%d]: %q has no group for the id", key, i, p)
		}
		out = append(out, re)
	}
	return out, nil
}

// Match returns the prompt's intent. Only a prompt that starts with the
// request counts: a pattern's match must begin at the prompt's first
// character that is not white space, whether or not the pattern is
// anchored, so a sentence that mentions or quotes a request ("I typed
// /run-tasks bd-x7y8 by mistake") asks for nothing. A prompt that holds a
// negation, a retraction or a question anywhere (retracted) asks for
// nothing either: a claim changes the shared tracker, so a request that
// is not plainly meant is not one. Arming is tried first, then claims; ok
// is false for any other prompt.
func (m *Matcher) Match(prompt string) (Intent, bool) {
	in := Intent{Kind: KindArm, ID: find(m.arm, prompt)}
	if in.ID == "" {
		in = Intent{Kind: KindClaim, ID: find(m.claim, prompt)}
	}
	if in.ID == "" || retracted(strings.ReplaceAll(prompt, in.ID, " ")) {
		return Intent{}, false
	}
	return in, true
}

// retraction finds, anywhere in a prompt, a negation ("not", "no",
// "never", "don't", "nor"), a retraction ("never mind", "wait",
// "actually", "cancel", "scratch that", "forget it", "hold on", "undo",
// "ignore"), a deferral ("later", "tomorrow") or a question mark.
var retraction = regexp.MustCompile(`(?i)\b(?:not|no|nope|nah|never|nevermind|nor|dont|cannot|cant|wont|` +
	`wait|actually|cancel|scratch|forget|hold|undo|ignore|later|tomorrow)\b|n['’]t\b|\?`)

// retracted reports whether prompt negates, retracts, defers or questions
// what it says (retraction).
func retracted(prompt string) bool { return retraction.MatchString(prompt) }

func find(res []*regexp.Regexp, prompt string) string {
	start := len(prompt) - len(strings.TrimLeftFunc(prompt, unicode.IsSpace))
	for _, re := range res {
		loc := re.FindStringSubmatchIndex(prompt)
		// The leftmost match: when it does not start the prompt, no match
		// does.
		if loc == nil || loc[0] > start {
			continue
		}
		idx := re.SubexpIndex("id")
		if idx < 0 {
			idx = 1
		}
		if loc[2*idx] < 0 {
			continue
		}
		// Sentence punctuation is never part of an id.
		if id := strings.TrimRight(prompt[loc[2*idx]:loc[2*idx+1]], ".-_"); id != "" {
			return id
		}
	}
	return ""
}
