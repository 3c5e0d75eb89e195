package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/config"
)

var testPromises = []config.Promise{
	{Text: "ALL TASKS COMPLETE", Condition: config.CondAllComplete},
	{Text: "BLOCKED - NEEDS USER", Condition: config.CondAllBlocked},
	{Text: "CONTEXT LIMIT - CHECKPOINT", Condition: config.CondContextCheckpoint},
	{Text: "  EPIC\tCOMPLETE ", Condition: config.CondAlways}, // configured with stray whitespace
}

func texts(ps []config.Promise) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Text)
	}
	return out
}

func TestFindPromises(t *testing.T) {
	const all = "ALL TASKS COMPLETE"
	const blocked = "BLOCKED - NEEDS USER"
	const epic = "  EPIC\tCOMPLETE "
	tests := []struct {
		name string
		msg  string
		want []string
	}{
		{"own line", "Done.\n<promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"whole message", "<promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"in prose", "Everything is closed, so <promise>ALL TASKS COMPLETE</promise> as asked.", []string{all}},
		{"a real tag in a negated sentence still counts", "I will not say <promise>ALL TASKS COMPLETE</promise> yet.", []string{all}},
		{"inner whitespace normalised", "<promise>\n  ALL   TASKS\tCOMPLETE \n</promise>", []string{all}},
		{"case-insensitive text", "<promise>All tasks complete</promise>", []string{all}},
		{"case-insensitive tag", "<PROMISE>ALL TASKS COMPLETE</Promise>", []string{all}},
		{"configured text with stray whitespace", "<promise>EPIC COMPLETE</promise>", []string{epic}},
		{"two claims in config order", "<promise>BLOCKED - NEEDS USER</promise>\n<promise>ALL TASKS COMPLETE</promise>", []string{all, blocked}},
		{"repeated claim reported once", "<promise>ALL TASKS COMPLETE</promise> <promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"xml-escaped (Codex)", "Done. &lt;promise&gt;ALL TASKS COMPLETE&lt;/promise&gt;", []string{all}},
		{"xml-escaped with escaped inner text", "&lt;promise&gt;BLOCKED&#32;- NEEDS USER&lt;/promise&gt;", []string{blocked}},
		{"unclosed opener before a real element", "<promise> oops <promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"after a closed fence", "```\ncode\n```\n<promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"after inline code", "Ran `bd ready`. <promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"unmatched backtick is literal", "It's a ` tick. <promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"inline code does not cross a blank line", "Start `x\n\n<promise>ALL TASKS COMPLETE</promise>\n\nend` y", []string{all}},
		{"after a quote", "> you said stop\n<promise>ALL TASKS COMPLETE</promise>", []string{all}},
		{"in a list item", "- closed bd-1\n- <promise>ALL TASKS COMPLETE</promise>", []string{all}},

		{"bare phrase", "ALL TASKS COMPLETE", nil},
		{"prose mentioning the phrase", "I will say ALL TASKS COMPLETE when beads agrees.", nil},
		{"prose naming the tag", "I'll emit the promise tag with ALL TASKS COMPLETE later.", nil},
		{"other text in the tag", "<promise>ALL TASKS COMPLETE SOON</promise>", nil},
		{"partial text in the tag", "<promise>ALL TASKS</promise>", nil},
		{"unknown promise", "<promise>I AM DONE</promise>", nil},
		{"empty tag", "<promise></promise>", nil},
		{"opening tag only", "<promise>ALL TASKS COMPLETE", nil},
		{"closing tag only", "ALL TASKS COMPLETE</promise>", nil},
		{"tag with attributes", `<promise id="1">ALL TASKS COMPLETE</promise>`, nil},
		{"mixed escaping", "&lt;promise&gt;ALL TASKS COMPLETE</promise>", nil},
		{"fenced", "Example:\n```\n<promise>ALL TASKS COMPLETE</promise>\n```", nil},
		{"fenced with info string", "```text\n<promise>ALL TASKS COMPLETE</promise>\n```\n", nil},
		{"indented fence", "1. step\n   ```\n   <promise>ALL TASKS COMPLETE</promise>\n   ```", nil},
		{"tilde fence", "~~~~\n<promise>ALL TASKS COMPLETE</promise>\n~~~~", nil},
		{"short closer does not close", "````\n```\n<promise>ALL TASKS COMPLETE</promise>\n````", nil},
		{"unclosed fence runs to the end", "```\n<promise>ALL TASKS COMPLETE</promise>", nil},
		{"inline code", "Say `<promise>ALL TASKS COMPLETE</promise>` when done.", nil},
		{"double-backtick inline code", "Use ``<promise>ALL TASKS COMPLETE</promise>`` then.", nil},
		{"one-line triple backticks are inline code", "```<promise>ALL TASKS COMPLETE</promise>```", nil},
		{"inline code across lines", "Say `<promise>ALL TASKS\nCOMPLETE</promise>` later", nil},
		{"quoted line", "> <promise>ALL TASKS COMPLETE</promise>", nil},
		{"quoted hook feedback", "The hook said:\n>Stop hook feedback: end with <promise>ALL TASKS COMPLETE</promise>\nStill working.", nil},
		{"tag split by a quote line", "<promise>ALL TASKS\n> x\nCOMPLETE</promise>", nil},
		{"escaped inside inline code", "`&lt;promise&gt;ALL TASKS COMPLETE&lt;/promise&gt;`", nil},
		{"empty message", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(FindPromises(tt.msg, testPromises))
			if !slices.Equal(got, tt.want) {
				t.Errorf("FindPromises(%q) = %q, want %q", tt.msg, got, tt.want)
			}
		})
	}
}

func TestFindPromisesConfig(t *testing.T) {
	msg := "<promise>ALL TASKS COMPLETE</promise>"
	if got := FindPromises(msg, nil); got != nil {
		t.Errorf("no promises configured: %v", got)
	}
	if got := FindPromises("<promise></promise>", []config.Promise{{Text: "  "}}); got != nil {
		t.Errorf("a blank configured text matched: %v", got)
	}
	// Two entries with the same text both come back, with their conditions.
	ps := []config.Promise{{Text: "ALL TASKS COMPLETE", Condition: config.CondAllComplete}, {Text: "all tasks complete", Condition: config.CondAlways}}
	if got := FindPromises(msg, ps); !slices.Equal(got, ps) {
		t.Errorf("FindPromises = %v, want %v", got, ps)
	}
}

func TestHasDoneToken(t *testing.T) {
	const sid = "01a20014-39c4-7960-982b-a6e5b41bfae9"
	tests := []struct {
		name   string
		msg    string
		prefix string
		want   bool
	}{
		{"own line", "Done.\nTASKMASTER_DONE::" + sid, "TASKMASTER_DONE", true},
		{"whole message", "TASKMASTER_DONE::" + sid, "TASKMASTER_DONE", true},
		{"surrounding whitespace", "Done.\n   TASKMASTER_DONE::" + sid + "  \r\nbye", "TASKMASTER_DONE", true},
		{"prefix given with colons", "TASKMASTER_DONE::" + sid, "TASKMASTER_DONE::", true},
		{"custom prefix", "ALL_DONE::" + sid, "ALL_DONE", true},
		{"after a closed fence", "```\nx\n```\nTASKMASTER_DONE::" + sid, "TASKMASTER_DONE", true},

		{"another session", "TASKMASTER_DONE::01a20014-0000-0000-0000-000000000000", "TASKMASTER_DONE", false},
		{"id with a suffix", "TASKMASTER_DONE::" + sid + "x", "TASKMASTER_DONE", false},
		{"in a sentence", "I printed TASKMASTER_DONE::" + sid + " above", "TASKMASTER_DONE", false},
		{"with trailing text", "TASKMASTER_DONE::" + sid + " done", "TASKMASTER_DONE", false},
		{"in a fence", "```\nTASKMASTER_DONE::" + sid + "\n```", "TASKMASTER_DONE", false},
		{"in an unclosed fence", "~~~\nTASKMASTER_DONE::" + sid, "TASKMASTER_DONE", false},
		{"inline code", "`TASKMASTER_DONE::" + sid + "`", "TASKMASTER_DONE", false},
		{"quoted", "> TASKMASTER_DONE::" + sid, "TASKMASTER_DONE", false},
		{"bold", "**TASKMASTER_DONE::" + sid + "**", "TASKMASTER_DONE", false},
		{"wrong prefix", "TASKMASTER_DONE::" + sid, "OTHER", false},
		{"lower case", "taskmaster_done::" + sid, "TASKMASTER_DONE", false},
		{"one colon", "TASKMASTER_DONE:" + sid, "TASKMASTER_DONE", false},
		{"empty prefix", "::" + sid, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HasDoneToken(tt.msg, tt.prefix, sid); got != tt.want {
				t.Errorf("HasDoneToken(%q, %q) = %v, want %v", tt.msg, tt.prefix, got, tt.want)
			}
		})
	}
	if HasDoneToken("TASKMASTER_DONE::", "TASKMASTER_DONE", "") {
		t.Error("an empty session id matched")
	}
}

func FuzzFindPromises(f *testing.F) {
	f.Add("Done.\n<promise>ALL TASKS COMPLETE</promise>", "ALL TASKS COMPLETE")
	f.Add("```\n<promise>X</promise>\n```\n`<promise>X</promise>`", "X")
	f.Add("&lt;promise&gt;a &amp; b&lt;/promise&gt;", "a & b")
	f.Add("<promise><promise>X</promise></promise>", "X")
	f.Add("`` ` ``` `` `\n\n> q\n~~~\n", "q")
	f.Fuzz(func(t *testing.T, msg, text string) {
		ps := []config.Promise{{Text: text, Condition: config.CondAllComplete}, {Text: "ALL TASKS COMPLETE", Condition: config.CondAlways}}
		got := FindPromises(msg, ps)
		// The result is an ordered subset of the configured promises.
		k := 0
		for _, p := range got {
			for k < len(ps) && ps[k] != p {
				k++
			}
			if k == len(ps) {
				t.Fatalf("FindPromises returned %v, not an ordered subset of %v", got, ps)
			}
			k++
		}
		if len(got) > 0 && !strings.Contains(strings.ToLower(msg), "promise") {
			t.Fatalf("a claim without any tag in %q", msg)
		}
		// Quoting every line hides every claim.
		if q := FindPromises("> "+strings.ReplaceAll(msg, "\n", "\n> "), ps); len(q) > 0 {
			t.Fatalf("quoted message still claims %v", q)
		}
		// Without code markers, an element appended on its own line counts.
		norm := strings.Join(strings.Fields(text), " ")
		if norm != "" && !strings.ContainsAny(msg, "`~") && !strings.ContainsAny(text, "<>&`~") {
			claim := msg + "\n<promise>" + text + "</promise>"
			if got := FindPromises(claim, ps[:1]); len(got) != 1 {
				t.Fatalf("FindPromises(%q) missed the appended claim of %q", claim, text)
			}
		}
		_ = HasDoneToken(msg, text, "sid")
	})
}
