package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// exitStatusDoc is where each command's EXIT STATUS is documented, between
// the markers (go test -run TestExitStatusDocs -update rewrites it).
const (
	exitStatusDoc   = "../../docs/exit-status.md"
	exitStatusBegin = "<!-- by command: go test ./cmd/runtasks -run TestExitStatusDocs -update -->"
	exitStatusEnd   = "<!-- end by command -->"
)

// commandExitStatus is every command's EXIT STATUS lines, by its path
// ("runtasks codex monitor"), the root's vocabulary left out.
func commandExitStatus() (paths []string, lines map[string]string) {
	lines = map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if s := c.Annotations[annExit]; s != "" && c.HasParent() {
			paths = append(paths, c.CommandPath())
			lines[c.CommandPath()] = s
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(newSystemFactory()))
	slices.Sort(paths)
	return paths, lines
}

// codes are the statuses an EXIT STATUS block lists.
func codes(block string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^ {2}(\d+) `).FindAllStringSubmatch(block, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestExitStatusDocs: docs and --help agree with the program. The EXIT
// STATUS of every command's --help is docs/exit-status.md's section for
// it, word for word; every status docs/agents.md and docs/claims.md give a
// command ("`runtasks claim` exit status: 0 claimed, 1 …", "`runtasks
// claim` exits 4") is one its --help lists, and a full list lists them all.
func TestExitStatusDocs(t *testing.T) {
	paths, lines := commandExitStatus()
	var b strings.Builder
	b.WriteString(exitStatusBegin + "\n")
	for _, p := range paths {
		b.WriteString("\n### " + p + "\n\n```\n" + lines[p] + "\n```\n")
	}
	b.WriteString("\n" + exitStatusEnd)
	data, err := os.ReadFile(exitStatusDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, exitStatusBegin), strings.Index(doc, exitStatusEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no section between %q and %q", exitStatusDoc, exitStatusBegin, exitStatusEnd)
	}
	if got := doc[i : j+len(exitStatusEnd)]; got != b.String() {
		if *update {
			if err := os.WriteFile(exitStatusDoc, []byte(doc[:i]+b.String()+doc[j+len(exitStatusEnd):]), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("%s's exit statuses by command differ from --help (go test -run TestExitStatusDocs -update rewrites them):\n%s", exitStatusDoc, b.String())
		}
	}

	list := regexp.MustCompile("`(runtasks [a-z -]+?)` exit status: ((?:\\d+ [^,.;]+(?:[,;] )?)+)")
	one := regexp.MustCompile("`(runtasks [a-z -]+?)` exits (\\d+)")
	found := 0
	for _, file := range []string{"../../docs/agents.md", "../../docs/claims.md"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(data)), " ")
		for _, m := range list.FindAllStringSubmatch(text, -1) {
			found++
			want, ok := lines[m[1]]
			if !ok {
				t.Errorf("%s: %s has no EXIT STATUS", file, m[1])
				continue
			}
			var got []string
			for _, item := range regexp.MustCompile(`[,;] `).Split(strings.TrimRight(m[2], ",; "), -1) {
				got = append(got, strings.Fields(item)[0])
			}
			if !slices.Equal(got, codes(want)) {
				t.Errorf("%s gives %s the statuses %v (%q); its --help lists %v", file, m[1], got, m[2], codes(want))
			}
		}
		for _, m := range one.FindAllStringSubmatch(text, -1) {
			found++
			if !slices.Contains(codes(lines[m[1]]), m[2]) {
				t.Errorf("%s: %s exits %s, which its --help does not list (%v)", file, m[1], m[2], codes(lines[m[1]]))
			}
		}
	}
	if found < 3 {
		t.Errorf("found %d exit statuses in docs/agents.md and docs/claims.md: the patterns no longer match the docs", found)
	}
}
