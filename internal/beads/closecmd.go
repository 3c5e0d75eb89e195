package beads

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ClosedBy lists the issue ids a shell command line would close with bd
// (bd close/done X…, bd update X… --status closed), in every simple command
// of its lists, pipelines, subshells and command substitutions, after
// NAME=value, env, command, exec, time or nohup. Quoted text, comments and
// heredoc bodies are words or skipped, never commands. Variables stay as
// written ($ID is not an id).
func ClosedBy(line string) (ids []string) {
	if !strings.Contains(line, "bd") {
		return nil
	}
	for _, words := range simpleCommands(line) {
		ids = append(ids, closeArgs(words)...)
	}
	return ids
}

// bdBoolFlags are bd v1.3.0's flags of close, update and the root that take no value.
var bdBoolFlags = []string{"allow-empty-description", "claim", "claim-next", "continue", "ephemeral", "force", "f",
	"history", "no-auto", "no-history", "persistent", "suggest-next", "cpu-profile", "global", "ignore-schema-skew",
	"json", "no-color", "readonly", "sandbox", "quiet", "q", "verbose", "v", "stdin", "help", "h"}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// MergesTask reports whether a shell line runs git merge on the task's
// branch (a word that is the id or ends in /id): a worker merging its task.
func MergesTask(line, id string) bool {
	for _, w := range simpleCommands(line) {
		if w = program(w); len(w) > 0 && filepath.Base(w[0]) == "git" && slices.Contains(w, "merge") &&
			slices.ContainsFunc(w, func(a string) bool { return a == id || strings.HasSuffix(a, "/"+id) }) {
			return true
		}
	}
	return false
}

// program drops a simple command's assignments and prefix words, and the
// wrappers timeout (its options and duration) and nice (its options).
func program(w []string) []string {
	for len(w) > 0 {
		switch first := w[0]; {
		case assignment.MatchString(first) || slices.Contains([]string{"env", "command", "exec", "time", "nohup", "!", "{", "then", "do", "else", "if", "while", "until"}, first):
			w = w[1:]
		case first == "timeout" || first == "nice":
			for w = w[1:]; len(w) > 0 && strings.HasPrefix(w[0], "-"); w = w[1:] {
				if slices.Contains([]string{"-s", "-k", "-n", "--signal", "--kill-after", "--adjustment"}, w[0]) && len(w) > 1 {
					w = w[1:]
				}
			}
			if first == "timeout" && len(w) > 0 {
				w = w[1:] // the duration
			}
		default:
			return w
		}
	}
	return w
}

// closeArgs is what one simple command closes.
func closeArgs(w []string) []string {
	if w = program(w); len(w) == 0 || filepath.Base(w[0]) != "bd" {
		return nil
	}
	var pos []string
	status := ""
	for i := 1; i < len(w); i++ {
		a := w[i]
		name, val, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "--":
			pos = append(pos, w[i+1:]...)
			i = len(w)
		case !strings.HasPrefix(a, "-") || a == "-":
			pos = append(pos, a)
		case eq || slices.Contains(bdBoolFlags, name):
		case strings.HasPrefix(a, "-s") && len(a) > 2 && a[1] != '-':
			val, eq = a[2:], true
			name = "s"
		case i+1 < len(w):
			i++
			val, eq = w[i], true
		}
		if eq && (name == "status" || name == "s") {
			status = val
		}
	}
	if len(pos) > 0 && (pos[0] == "close" || pos[0] == "done" || pos[0] == "update" && status == StatusClosed) {
		return pos[1:]
	}
	return nil
}

// simpleCommands splits a shell line into the words of its simple
// commands: a careful subset of POSIX sh quoting, enough to tell a command
// from text that mentions one.
func simpleCommands(line string) (cmds [][]string) {
	var (
		words    []string
		cur      strings.Builder
		inWord   bool
		redirect bool     // the next word is a redirection's target
		heredocs []string // delimiters of heredocs whose bodies start at the next newline
	)
	endWord := func() {
		if inWord && !redirect {
			words = append(words, cur.String())
		}
		redirect = redirect && !inWord
		cur.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			i++
			if line[i] != '\n' {
				cur.WriteByte(line[i])
				inWord = true
			}
		case c == '\'':
			quoted, _, _ := strings.Cut(line[i+1:], "'")
			cur.WriteString(quoted)
			i, inWord = i+len(quoted)+1, true
		case c == '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\\\"$`\n", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			inWord = true
		case c == '#' && !inWord:
			for i+1 < len(line) && line[i+1] != '\n' {
				i++
			}
		case c == '<' && strings.HasPrefix(line[i:], "<<") && !strings.HasPrefix(line[i:], "<<<"):
			endWord()
			i += 2
			if i < len(line) && line[i] == '-' {
				i++
			}
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			start := i
			for i < len(line) && !strings.ContainsRune(" \t\n;&|<>()", rune(line[i])) {
				i++
			}
			heredocs = append(heredocs, strings.Trim(line[start:i], `'"\`))
			i--
		case c == '<' || c == '>':
			if inWord && strings.Trim(cur.String(), "0123456789") == "" {
				cur.Reset()
				inWord = false
			}
			endWord()
			for i+1 < len(line) && strings.IndexByte("<>&|", line[i+1]) >= 0 {
				i++
			}
			redirect = true
		case c == '\n':
			endCmd()
			for _, delim := range heredocs {
				for i+1 < len(line) {
					body, _, _ := strings.Cut(line[i+1:], "\n")
					i += 1 + len(body)
					if strings.TrimLeft(body, "\t") == delim {
						break
					}
				}
			}
			heredocs = nil
		case c == ' ' || c == '\t':
			endWord()
		case strings.IndexByte(";&|()`", c) >= 0 || c == '$' && strings.HasPrefix(line[i:], "$("):
			endCmd()
			if c == '$' {
				i++
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}
