package engine

import (
	"html"
	"regexp"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/config"
)

// FindPromises returns the configured promises that msg claims, in the
// order of promises: a whole <promise>TEXT</promise> element anywhere in
// prose (tag and text compared case-insensitively, whitespace collapsed; no
// attributes), or its XML-escaped form, since Codex escapes block reasons
// and models copy what they read. Tags inside fenced code, inline code or
// a quoted line do not count.
func FindPromises(msg string, promises []config.Promise) []config.Promise {
	if len(promises) == 0 || !strings.Contains(asciiLower(msg), "promise") {
		return nil
	}
	claimed := promiseTexts(maskCode(msg))
	var out []config.Promise
	for _, p := range promises {
		if want := strings.Join(strings.Fields(p.Text), " "); want != "" && slices.ContainsFunc(claimed, func(c string) bool { return strings.EqualFold(c, want) }) {
			out = append(out, p)
		}
	}
	return out
}

// HasDoneToken reports whether msg holds the done line PREFIX::SESSIONID
// on a line of its own, outside code and quotes. A prefix may end in "::";
// an empty prefix or session id never matches.
func HasDoneToken(msg, prefix, sessionID string) bool {
	prefix = strings.TrimSuffix(strings.TrimSpace(prefix), "::")
	sessionID = strings.TrimSpace(sessionID)
	if prefix == "" || sessionID == "" {
		return false
	}
	want := prefix + "::" + sessionID
	if !strings.Contains(msg, want) {
		return false
	}
	return slices.ContainsFunc(strings.Split(maskCode(msg), "\n"), func(line string) bool { return strings.TrimSpace(line) == want })
}

// promiseElems match the promise element, raw and XML-escaped, in
// asciiLower's copy of the text.
var promiseElems = []*regexp.Regexp{
	regexp.MustCompile(`(?s)<promise>(.*?)</promise>`),
	regexp.MustCompile(`(?s)&lt;promise&gt;(.*?)&lt;/promise&gt;`),
}

// promiseTexts lists the inner texts, whitespace collapsed, of the promise
// elements in s, in one pass per tag form (raw, then XML-escaped).
func promiseTexts(s string) []string {
	lower := asciiLower(s)
	var out []string
	for _, re := range promiseElems {
		for _, m := range re.FindAllStringSubmatchIndex(lower, -1) {
			open, start, end := lower[m[0]:m[2]], m[2], m[3]
			// Of several opening tags before one closing tag, the last one
			// makes the element.
			if k := strings.LastIndex(lower[start:end], open); k >= 0 {
				start += k + len(open)
			}
			inner := s[start:end]
			if open[0] == '&' {
				inner = html.UnescapeString(inner)
			}
			out = append(out, strings.Join(strings.Fields(inner), " "))
		}
	}
	return out
}

// asciiLower lowers ASCII letters only, so byte offsets stay valid for s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// maskCode blanks out fenced code, quoted lines and inline code spans with
// NULs (not whitespace, so no element matches across them), keeping
// newlines so offsets and lines still match msg.
func maskCode(msg string) string {
	b := []byte(msg)
	var (
		fence    byte // '`' or '~' while inside a fenced block
		fenceLen int
		para     = -1 // start of the current paragraph, -1 between paragraphs
	)
	endPara := func(at int) {
		if para >= 0 {
			maskInlineCode(b[para:at])
			para = -1
		}
	}
	start := 0
	for full := range strings.Lines(msg) {
		line := strings.TrimSuffix(full, "\n")
		end := start + len(line)
		trimmed := strings.TrimLeft(line, " \t")
		switch c, n := fenceRun(trimmed); {
		case fence != 0:
			if c == fence && n >= fenceLen && strings.TrimSpace(trimmed[n:]) == "" {
				fence = 0
			}
			blank(b, start, end)
		case c != 0:
			endPara(start)
			fence, fenceLen = c, n
			blank(b, start, end)
		case strings.HasPrefix(trimmed, ">"):
			endPara(start)
			blank(b, start, end)
		case strings.TrimSpace(line) == "":
			endPara(start)
		default:
			if para < 0 {
				para = start
			}
		}
		start += len(full)
	}
	endPara(len(b))
	return string(b)
}

// fenceRun returns the fence character and run length at the start of a
// left-trimmed line that opens or closes a fenced block: three or more
// backticks or tildes. As in CommonMark, a backtick fence's info string
// holds no backtick (so "```x```" is inline code, not a fence).
func fenceRun(s string) (byte, int) {
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0
	}
	n := len(s) - len(strings.TrimLeft(s, s[:1]))
	if n < 3 || s[0] == '`' && strings.Contains(s[n:], "`") {
		return 0, 0
	}
	return s[0], n
}

// maskInlineCode blanks the inline code spans of one paragraph: a run of n
// backticks up to the next run of exactly n backticks. A run with no
// partner is literal text.
func maskInlineCode(p []byte) {
	runs := backticks.FindAllIndex(p, -1)
	// next[k] is one more than the index of the next run as long as runs[k] (0: none).
	next, last := make([]int, len(runs)), map[int]int{}
	for k := len(runs) - 1; k >= 0; k-- {
		n := runs[k][1] - runs[k][0]
		next[k], last[n] = last[n], k+1
	}
	for k := 0; k < len(runs); k++ {
		if j := next[k] - 1; j >= 0 {
			blank(p, runs[k][0], runs[j][1])
			k = j
		}
	}
}

var backticks = regexp.MustCompile("`+")

// blank masks b[from:to] with NULs, keeping newlines.
func blank(b []byte, from, to int) {
	for i := from; i < to; i++ {
		if b[i] != '\n' {
			b[i] = 0
		}
	}
}
