package install

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/runtasks/runtasks/internal/hook"
)

// hookHandler is a hook entry, its keys in the order each agent's
// documentation shows them.
type hookHandler struct {
	Name        string `json:"name,omitempty"`
	Type        string `json:"type,omitempty"`
	Command     string `json:"command"`
	Timeout     int    `json:"timeout,omitempty"`
	Description string `json:"description,omitempty"`
	// LoopLimit is Cursor's, on its stop hook only (null: no limit, runtasks' cap holds).
	LoopLimit json.RawMessage `json:"loop_limit,omitempty"`
}

// hookGroup is a grouped agent's list item.
type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookHandler `json:"hooks"`
}

// entry is the list item install writes for one event: the handler,
// grouped ({matcher?, hooks: [handler]}) for all but Cursor.
func entry(o Options, ev eventSpec) any {
	cmd := Command(o, ev.sub)
	timeout := DefaultTimeout
	if (ev.sub == StopHook || ev.sub == PreToolHook) && o.StopTimeout > timeout {
		timeout = o.StopTimeout
	}
	secs := int((timeout + time.Second - 1) / time.Second)
	h := hookHandler{Type: "command", Command: cmd, Timeout: secs} // Claude Code, Codex: seconds
	switch o.Agent {
	case hook.Cursor:
		h = hookHandler{Command: cmd}
		if ev.event == hook.EventStop {
			h.LoopLimit = json.RawMessage("null")
			if o.LoopLimit > 0 {
				h.LoopLimit = strconv.AppendInt(nil, int64(o.LoopLimit), 10)
			}
		}
		return h
	case hook.Gemini:
		h = hookHandler{
			Name:        "runtasks-" + strings.TrimSuffix(ev.sub, "-hook"),
			Type:        "command",
			Command:     cmd,
			Timeout:     secs * 1000, // milliseconds
			Description: "runtasks " + ev.sub,
		}
	}
	return hookGroup{ev.matcher, []hookHandler{h}}
}

// ours reports whether a hook command runs a runtasks hook subcommand
// (runtasks-hook too, so doctor still reports such a stale entry).
func ours(cmd string) bool {
	w := shellWords(cmd)
	if len(w) < 2 || !slices.Contains([]string{StopHook, PromptHook, SessionHook, PreToolHook}, w[1]) {
		return false
	}
	base := strings.TrimSuffix(filepath.Base(w[0]), ".exe")
	return base == "runtasks" || base == "runtasks-hook"
}

// foreignEntry reports whether e is an entry any install wrote for the
// subcommand: one handler whose command passes only --agent and --epic
// (another flag makes it the user's own).
func foreignEntry(e hujson.Value, grouped bool, sub string) bool {
	hs := handlers(e, grouped)
	if len(hs) != 1 || !ours(command(hs[0])) {
		return false
	}
	args := shellWords(command(hs[0]))
	if args[1] != sub {
		return false
	}
	for i := 2; i < len(args); i++ {
		switch {
		case (args[i] == "--agent" || args[i] == "--epic") && i+1 < len(args):
			i++
		case strings.HasPrefix(args[i], "--agent=") || strings.HasPrefix(args[i], "--epic="):
		default:
			return false
		}
	}
	return true
}

// handlers are a hooks list item's handlers (grouped: {hooks: [handler]}).
func handlers(item hujson.Value, grouped bool) []hujson.Value {
	if grouped {
		return elements(member(item, "hooks"))
	}
	return []hujson.Value{item}
}

// command is a handler's command ("" for none).
func command(h hujson.Value) string {
	if lit, ok := member(h, "command").Value.(hujson.Literal); ok && lit.Kind() == '"' {
		return lit.String()
	}
	return ""
}

// Entry is one runtasks hook found in a settings file.
type Entry struct {
	Event   string // the agent's event name
	Command string
	// Program is the command's first word (the runtasks binary).
	Program string
	// Epic is the --epic the command passes ("" for none).
	Epic string
	// Timeout is the entry's "timeout" (0: none; Gemini CLI counts milliseconds).
	Timeout time.Duration
}

// flagValue is the value words give the flag name (--name V or --name=V).
func flagValue(words []string, name string) string {
	for i, w := range words {
		if w == name && i+1 < len(words) {
			return words[i+1]
		}
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v
		}
	}
	return ""
}

// Entries lists the runtasks hooks in agent's settings file, whoever wrote them;
// agent is one of hook.Agents (an unknown one reads as ungrouped, like Cursor).
func Entries(agent string, data []byte) ([]Entry, error) {
	d, err := parseDoc(data)
	if err != nil {
		return nil, err
	}
	hooks, _ := member(d.root, "hooks").Value.(*hujson.Object)
	if hooks == nil {
		return nil, nil
	}
	unit := time.Second
	if agent == hook.Gemini {
		unit = time.Millisecond
	}
	var out []Entry
	for _, m := range hooks.Members {
		ev := m.Name.Value.(hujson.Literal).String()
		for _, item := range elements(m.Value) {
			for _, h := range handlers(item, specs[agent].grouped) {
				if cmd := command(h); ours(cmd) {
					words := shellWords(cmd)
					timeout, _ := member(h, "timeout").Value.(hujson.Literal)
					out = append(out, Entry{Event: ev, Command: cmd, Program: words[0], Epic: flagValue(words, "--epic"),
						Timeout: time.Duration(timeout.Float() * float64(unit))})
				}
			}
		}
	}
	return out, nil
}

// member is the value of obj's member name (zero when missing).
func member(obj hujson.Value, name string) hujson.Value {
	if o, ok := obj.Value.(*hujson.Object); ok {
		if i := memberIndex(o, name); i >= 0 {
			return o.Members[i].Value
		}
	}
	return hujson.Value{}
}

// elements are the elements of a list (none for any other value).
func elements(list hujson.Value) []hujson.Value {
	if a, ok := list.Value.(*hujson.Array); ok {
		return a.Elements
	}
	return nil
}

// shellWords splits a command line as /bin/sh would (no expansions).
func shellWords(s string) []string {
	var (
		out  []string
		cur  []byte
		in   bool // a word has started (it may be empty: '')
		quot byte
	)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quot != 0 && c == quot:
			quot = 0
		case c == '\\' && i+1 < len(s) && quot != '\'':
			i++
			cur, in = append(cur, s[i]), true
		case quot != 0:
			cur = append(cur, c)
		case c == '\'' || c == '"':
			quot, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, string(cur))
				cur, in = cur[:0], false
			}
		default:
			cur, in = append(cur, c), true
		}
	}
	if in {
		out = append(out, string(cur))
	}
	return out
}
