package orchestrator

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// optKind is the type of a checker option.
type optKind int

const (
	optStr optKind = iota
	optStrList
	optBoolean
	optNonNegInt
	optDur
	optCheckList
)

// checkOptions lists each checker's options (besides type and name) and
// which are required.
var checkOptions = map[string]map[string]optKind{
	"beads":      {},
	"promise":    {"texts": optStrList},
	"done_token": {"prefix": optStr},
	"command":    {"run": optStr, "timeout": optDur, "dir": optStr, "tail_lines": optNonNegInt},
	"files":      {"paths": optStrList, "non_empty": optBoolean, "template": optStr},
	"plan":       {"required": optBoolean},
	"results":    {},
	"composite":  {"mode": optStr, "checks": optCheckList},
}

var checkRequired = map[string][]string{
	"command":   {"run"},
	"files":     {"paths"},
	"composite": {"checks"},
}

// checkOptionProblems checks a checker's options in workflow.checks:
// unknown options, wrong types, missing required ones, bad values; nested
// composite checks are checked in turn.
func checkOptionProblems(typ string, spec map[string]any) []cfgProblem {
	opts := checkOptions[typ]
	var probs []cfgProblem
	keys := make([]string, 0, len(spec))
	for k := range spec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "type" {
			continue
		}
		v := spec[k]
		if k == "name" {
			if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
				probs = append(probs, cfgProblem{".name", "must be a non-empty string"})
			}
			continue
		}
		kind, ok := opts[k]
		if !ok {
			known := []string{"name"}
			for o := range opts {
				known = append(known, o)
			}
			sort.Strings(known)
			probs = append(probs, cfgProblem{"." + k, fmt.Sprintf("unknown option for the %s checker (known: %s)", typ, strings.Join(known, ", "))})
			continue
		}
		for _, p := range optProblems(kind, v) {
			probs = append(probs, cfgProblem{"." + k + p.sub, p.msg})
		}
	}
	for _, r := range checkRequired[typ] {
		if _, ok := spec[r]; !ok {
			probs = append(probs, cfgProblem{"." + r, "missing: the " + typ + " checker needs it"})
		}
	}
	switch typ {
	case "command":
		if s, ok := spec["run"].(string); ok && strings.TrimSpace(s) == "" {
			probs = append(probs, cfgProblem{".run", "must not be empty"})
		}
	case "files":
		if l, ok := spec["paths"].([]any); ok && len(l) == 0 {
			probs = append(probs, cfgProblem{".paths", "must list at least one path"})
		}
	case "composite":
		if m, ok := spec["mode"].(string); ok && !slices.Contains([]string{"all_must_pass", "any"}, m) {
			probs = append(probs, cfgProblem{".mode", fmt.Sprintf("must be all_must_pass or any, got %q", m)})
		}
		if l, ok := spec["checks"].([]any); ok && len(l) == 0 {
			probs = append(probs, cfgProblem{".checks", "must list at least one check"})
		}
	}
	return probs
}

func optProblems(kind optKind, v any) []cfgProblem {
	switch kind {
	case optStr:
		if _, ok := v.(string); !ok {
			return cfgOne("expected a string, got %s", cfgDescribe(v))
		}
	case optStrList:
		l, ok := v.([]any)
		if !ok {
			return cfgOne("expected a list of strings, got %s", cfgDescribe(v))
		}
		for i, it := range l {
			if s, ok := it.(string); !ok || s == "" {
				return []cfgProblem{{fmt.Sprintf("[%d]", i), "expected a non-empty string, got " + cfgDescribe(it)}}
			}
		}
	case optBoolean:
		if _, ok := v.(bool); !ok {
			return cfgOne("expected true or false, got %s", cfgDescribe(v))
		}
	case optNonNegInt:
		if n, ok := asInt(v); !ok || n < 0 {
			return cfgOne("expected a whole number, 0 or more, got %s", cfgDescribe(v))
		}
	case optDur:
		if d, ok := asDuration(v); !ok || d <= 0 {
			return cfgOne("expected a duration more than 0 (30s, 5m, 1h), got %s", cfgDescribe(v))
		}
	case optCheckList:
		l, ok := v.([]any)
		if !ok {
			return cfgOne("expected a list of checks, got %s", cfgDescribe(v))
		}
		var probs []cfgProblem
		for i, it := range l {
			for _, p := range CheckSpecProblems(it) {
				probs = append(probs, cfgProblem{fmt.Sprintf("[%d]", i) + p.sub, p.msg})
			}
		}
		return probs
	}
	return nil
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

func asDuration(v any) (time.Duration, bool) {
	switch d := v.(type) {
	case string:
		x, err := time.ParseDuration(d)
		return x, err == nil
	case time.Duration:
		return d, true
	}
	return 0, false
}

// Option readers for validated specs (m may be nil for a bare name).

func optString(m map[string]any, k, def string) string {
	if s, ok := m[k].(string); ok {
		return s
	}
	return def
}

func optStrings(m map[string]any, k string) []string {
	var out []string
	l, _ := m[k].([]any)
	for _, it := range l {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func optBool(m map[string]any, k string) bool {
	b, _ := m[k].(bool)
	return b
}

func optInt(m map[string]any, k string, def int) int {
	if n, ok := asInt(m[k]); ok {
		return n
	}
	return def
}

func optDuration(m map[string]any, k string, def time.Duration) time.Duration {
	if d, ok := asDuration(m[k]); ok {
		return d
	}
	return def
}
