package install

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/hook"
)

// handler is the hook entry install writes for one event.
func handler(o Options, ev eventSpec) *object {
	h := newObject()
	cmd := Command(o, ev.sub)
	switch o.Agent {
	case hook.Cursor:
		h.set("command", cmd)
		if ev.event == hook.EventStop {
			if o.LoopLimit > 0 {
				h.set("loop_limit", json.Number(fmt.Sprint(o.LoopLimit)))
			} else {
				h.set("loop_limit", nil) // no limit: runtasks' cap holds
			}
		}
	case hook.Gemini:
		h.set("name", "runtasks-"+strings.TrimSuffix(ev.sub, "-hook"))
		h.set("type", "command")
		h.set("command", cmd)
		h.set("timeout", json.Number("30000")) // milliseconds
		h.set("description", "runtasks "+ev.sub)
	default: // Claude Code, Codex: seconds
		h.set("type", "command")
		h.set("command", cmd)
		h.set("timeout", json.Number("30"))
	}
	return h
}

// merge puts runtasks' handlers into doc (or, with remove, takes every
// runtasks handler out). A handler already there is replaced where it
// stands, so other hooks keep their order and Codex's trust keys
// (file:event:group:handler) stay valid.
func merge(o Options, doc *object, remove bool) error {
	sp := specs[o.Agent]
	want := map[string]*object{} // native event → handler
	var order []string
	if !remove {
		for _, ev := range sp.events {
			n := hook.NativeEvent(o.Agent, ev.event)
			want[n] = handler(o, ev)
			order = append(order, n)
		}
	}
	matcher := map[string]string{}
	for _, ev := range sp.events {
		matcher[hook.NativeEvent(o.Agent, ev.event)] = ev.matcher
	}

	hv, ok := doc.get("hooks")
	if !ok {
		if remove {
			return nil
		}
		hv = newObject()
	}
	hooks, ok := hv.(*object)
	if !ok {
		return fmt.Errorf(`"hooks" is not an object`)
	}
	if o.Agent == hook.Cursor && !remove {
		if _, ok := doc.get("version"); !ok {
			doc.set("version", json.Number("1"))
		}
	}

	for _, ev := range slices.Clone(hooks.keys) {
		arr, ok := hooks.vals[ev].([]any)
		if !ok {
			continue // e.g. Gemini's hooks.disabled list, or "enabled"
		}
		w := want[ev]
		placed, hadOurs := false, false
		var out []any
		for _, item := range arr {
			if !sp.grouped {
				if isOurs(item, o.Executable) {
					hadOurs = true
					if w != nil && !placed {
						out = append(out, w)
						placed = true
					}
					continue
				}
				out = append(out, item)
				continue
			}
			g, ok := item.(*object)
			if !ok {
				out = append(out, item)
				continue
			}
			list, ok := g.vals["hooks"].([]any)
			if !ok {
				out = append(out, item)
				continue
			}
			var kept []any
			groupOurs := false
			for _, h := range list {
				if isOurs(h, o.Executable) {
					hadOurs, groupOurs = true, true
					if w != nil && !placed {
						kept = append(kept, w)
						placed = true
					}
					continue
				}
				kept = append(kept, h)
			}
			if groupOurs && len(kept) == 0 {
				continue // the group held only runtasks' entries
			}
			if groupOurs {
				g.set("hooks", kept)
			}
			out = append(out, g)
		}
		if w != nil && !placed {
			out = append(out, group(sp, w, matcher[ev]))
			placed = true
		}
		if len(out) == 0 && hadOurs {
			hooks.del(ev)
			continue
		}
		if hadOurs || placed {
			if out == nil {
				out = []any{}
			}
			hooks.set(ev, out)
		}
		delete(want, ev)
	}
	for _, ev := range order {
		if w, ok := want[ev]; ok {
			hooks.set(ev, []any{group(sp, w, matcher[ev])})
		}
	}

	switch {
	case hooks.len() > 0:
		doc.set("hooks", hooks)
	case remove:
		doc.del("hooks")
		// Cursor's "version": 1 was added with the hooks; alone it goes too.
		if o.Agent == hook.Cursor && doc.len() == 1 {
			if v, ok := doc.get("version"); ok && fmt.Sprint(v) == "1" {
				doc.del("version")
			}
		}
	}
	return nil
}

func group(sp agentSpec, h *object, matcher string) any {
	if !sp.grouped {
		return h
	}
	g := newObject()
	if matcher != "" {
		g.set("matcher", matcher)
	}
	g.set("hooks", []any{h})
	return g
}

// isOurs reports whether a hook entry runs runtasks' hooks.
func isOurs(item any, exe string) bool {
	h, ok := item.(*object)
	if !ok {
		return false
	}
	cmd, _ := h.vals["command"].(string)
	return ours(cmd, exe)
}

// ours reports whether a hook command runs runtasks' stop-hook,
// prompt-hook or session-hook: its program is exe or a file named
// runtasks.
func ours(cmd, exe string) bool {
	w := shellWords(cmd)
	if len(w) < 2 || !slices.Contains(ourSubcommands, w[1]) {
		return false
	}
	base := strings.TrimSuffix(filepath.Base(w[0]), ".exe")
	return w[0] == exe || base == "runtasks"
}

// Entry is one runtasks hook found in a settings file.
type Entry struct {
	Event   string // the agent's event name
	Command string
	// Program is the command's first word (the runtasks binary).
	Program string
}

// Entries lists the runtasks hooks in a settings file's content (for
// doctor). A file that is not JSON is an error.
func Entries(agent string, data []byte) ([]Entry, error) {
	sp, ok := specs[agent]
	if !ok {
		return nil, fmt.Errorf("unknown agent %q", agent)
	}
	doc, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	hooks, _ := doc.vals["hooks"].(*object)
	if hooks == nil {
		return nil, nil
	}
	var out []Entry
	add := func(ev string, h any) {
		if o, ok := h.(*object); ok {
			if cmd, _ := o.vals["command"].(string); ours(cmd, "") {
				out = append(out, Entry{Event: ev, Command: cmd, Program: shellWords(cmd)[0]})
			}
		}
	}
	for _, ev := range hooks.keys {
		arr, _ := hooks.vals[ev].([]any)
		for _, item := range arr {
			if !sp.grouped {
				add(ev, item)
				continue
			}
			if g, ok := item.(*object); ok {
				list, _ := g.vals["hooks"].([]any)
				for _, h := range list {
					add(ev, h)
				}
			}
		}
	}
	return out, nil
}

// shellQuote quotes s for /bin/sh when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords splits a command line as /bin/sh would for plain words and
// quotes (no expansions).
func shellWords(s string) []string {
	var (
		out  []string
		cur  strings.Builder
		in   bool
		quot rune
	)
	flush := func() {
		if in {
			out = append(out, cur.String())
			cur.Reset()
			in = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quot != 0:
			if r == quot {
				quot = 0
			} else if r == '\\' && quot == '"' && i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quot, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	flush()
	return out
}
