package install

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/runtasks/runtasks/internal/hook"
)

// handler is the hook entry install writes for one event, keys in the
// order each agent's documentation shows them.
func handler(o Options, ev eventSpec) ordered {
	cmd := Command(o, ev.sub)
	timeout := DefaultTimeout
	if ev.sub == StopHook && o.StopTimeout > timeout {
		timeout = o.StopTimeout
	}
	secs := int((timeout + time.Second - 1) / time.Second)
	switch o.Agent {
	case hook.Cursor:
		h := ordered{{"command", cmd}}
		if ev.event == hook.EventStop {
			if o.LoopLimit > 0 {
				h = append(h, kv{"loop_limit", o.LoopLimit})
			} else {
				h = append(h, kv{"loop_limit", nil}) // no limit: runtasks' cap holds
			}
		}
		return h
	case hook.Gemini:
		return ordered{
			{"name", "runtasks-" + strings.TrimSuffix(ev.sub, "-hook")},
			{"type", "command"},
			{"command", cmd},
			{"timeout", secs * 1000}, // milliseconds
			{"description", "runtasks " + ev.sub},
		}
	default: // Claude Code, Codex: seconds
		return ordered{{"type", "command"}, {"command", cmd}, {"timeout", secs}}
	}
}

// ours reports whether a hook command runs runtasks' stop-hook,
// prompt-hook or session-hook: its program is exe or a file named runtasks
// or runtasks-hook (the hook-only build of earlier versions, so that
// doctor still reports such a stale entry).
func ours(cmd, exe string) bool {
	w := shellWords(cmd)
	if len(w) < 2 || !slices.Contains(ourSubcommands, w[1]) {
		return false
	}
	base := strings.TrimSuffix(filepath.Base(w[0]), ".exe")
	return w[0] == exe || base == "runtasks" || base == "runtasks-hook"
}

// Entry is one runtasks hook found in a settings file.
type Entry struct {
	Event   string // the agent's event name
	Command string
	// Program is the command's first word (the runtasks binary).
	Program string
	// Epic is the --epic the command passes ("" for none).
	Epic string
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

// Entries lists the hooks in a settings file's content that run
// runtasks' stop-hook, prompt-hook or session-hook, whoever wrote them
// (for doctor). A file that is not JSON (with comments) is an error.
func Entries(agent string, data []byte) ([]Entry, error) {
	sp, ok := specs[agent]
	if !ok {
		return nil, fmt.Errorf("unknown agent %q", agent)
	}
	d, err := parseDoc(data)
	if err != nil {
		return nil, err
	}
	hv, err := d.lookup([]string{"hooks"})
	if err != nil || hv == nil {
		return nil, err
	}
	hooks, ok := hv.Value.(*hujson.Object)
	if !ok {
		return nil, nil
	}
	var out []Entry
	add := func(ev string, h hujson.Value) {
		obj, ok := h.Value.(*hujson.Object)
		if !ok {
			return
		}
		i := memberIndex(obj, "command")
		if i < 0 {
			return
		}
		lit, ok := obj.Members[i].Value.Value.(hujson.Literal)
		if !ok || lit.Kind() != '"' {
			return
		}
		if cmd := lit.String(); ours(cmd, "") {
			words := shellWords(cmd)
			out = append(out, Entry{Event: ev, Command: cmd, Program: words[0], Epic: flagValue(words, "--epic")})
		}
	}
	for _, m := range hooks.Members {
		ev := m.Name.Value.(hujson.Literal).String()
		arr, ok := m.Value.Value.(*hujson.Array)
		if !ok {
			continue
		}
		for _, item := range arr.Elements {
			if !sp.grouped {
				add(ev, item)
				continue
			}
			g, ok := item.Value.(*hujson.Object)
			if !ok {
				continue
			}
			if i := memberIndex(g, "hooks"); i >= 0 {
				if list, ok := g.Members[i].Value.Value.(*hujson.Array); ok {
					for _, h := range list.Elements {
						add(ev, h)
					}
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
