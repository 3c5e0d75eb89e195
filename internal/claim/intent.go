// Package claim recognises claims and arming requests in prompts, claims
// beads tasks for agent sessions (with a run folder and the context injected
// into the agent) and arms sessions for epics.
package claim

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/runtasks/runtasks/internal/config"
)

const (
	KindClaim = "claim" // the prompt claims a task ("claim bd-x7y8.3")
	KindArm   = "arm"   // the prompt arms the session for an epic ("/run-tasks bd-x7y8")
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

// NewMatcher compiles the patterns; each needs a group named id, or a first group.
func NewMatcher(c config.Claim) (*Matcher, error) {
	claim, err := compile("claim.patterns", c.Patterns)
	arm, err2 := compile("claim.arm_patterns", c.ArmPatterns)
	if err := cmp.Or(err, err2); err != nil {
		return nil, err
	}
	return &Matcher{claim: claim, arm: arm}, nil
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

// Match returns the prompt's intent, arming tried first. Only a prompt that
// starts with the request counts (a sentence quoting one asks for nothing),
// and none that holds a negation, a retraction or a question anywhere: a
// claim changes the shared tracker, so a request not plainly meant is none.
func (m *Matcher) Match(prompt string) (Intent, bool) {
	in := Intent{Kind: KindArm, ID: find(m.arm, prompt)}
	if in.ID == "" {
		in = Intent{Kind: KindClaim, ID: find(m.claim, prompt)}
	}
	if in.ID == "" || retraction.MatchString(strings.ReplaceAll(prompt, in.ID, " ")) {
		return Intent{}, false
	}
	return in, true
}

// retraction finds a negation, a retraction ("never mind", "scratch
// that"), a deferral ("later") or a question mark.
var retraction = regexp.MustCompile(`(?i)\b(?:not|no|nope|nah|never|nevermind|nor|dont|cannot|cant|wont|` +
	`wait|actually|cancel|scratch|forget|hold|undo|ignore|later|tomorrow)\b|n['’]t\b|\?`)

func find(res []*regexp.Regexp, prompt string) string {
	start := len(prompt) - len(strings.TrimLeftFunc(prompt, unicode.IsSpace))
	for _, re := range res {
		loc := re.FindStringSubmatchIndex(prompt)
		// The leftmost match: when it does not start the prompt, none does.
		if loc == nil || loc[0] > start {
			continue
		}
		idx := max(re.SubexpIndex("id"), 1) // SubexpIndex is -1 without a group named id
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
