package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// CheckTypes names the built-in completion checkers.
var CheckTypes = []string{"beads", "promise", "done_token", "command", "files", "plan", "results", "composite"}

// checkOptions lists each checker's options, besides type and name;
// checkRequired those it must be given; checkDefaults the values of those
// it may leave out.
var (
	checkOptions = map[string][]string{
		"promise":    {"texts"},
		"done_token": {"prefix"},
		"command":    {"dir", "run", "tail_lines", "timeout"},
		"files":      {"non_empty", "paths", "template"},
		"plan":       {"required"},
		"composite":  {"checks", "mode"},
	}
	checkRequired = map[string][]string{"command": {"run"}, "files": {"paths"}, "composite": {"checks"}}
	checkDefaults = map[string]map[string]any{
		"command":   {"timeout": DefaultCheckTimeout, "tail_lines": 20},
		"composite": {"mode": "all_must_pass"},
	}
)

// DefaultCheckTimeout is a command check's timeout when it names none.
const DefaultCheckTimeout = 10 * time.Minute

// cfgCheckSpec is the decoder's hook for a workflow.checks item: a checker
// name, or {type, name, …options} with its type's options only. It gives
// the item as a mapping, with the defaults of the options left out.
func cfgCheckSpec(data any) (any, error) {
	m, isMap := data.(map[string]any)
	if typ, ok := data.(string); ok {
		if req := checkRequired[typ]; len(req) > 0 {
			return nil, cfgProblems{{"", fmt.Sprintf("the %s checker needs %s: write {type: %s, %s: …}", typ, strings.Join(req, ", "), typ, req[0])}}
		}
		m, isMap = map[string]any{"type": typ}, checkTypeProblems(typ) == nil
		if !isMap {
			return nil, checkTypeProblems(typ)
		}
	}
	if !isMap {
		return nil, cfgTypeError(cfgCheckSpecType, data)
	}
	typ, ok := m["type"].(string)
	if !ok {
		return nil, cfgProblems{{".type", "missing: a check object needs its type (" + strings.Join(CheckTypes, ", ") + ")"}}
	}
	if probs := checkTypeProblems(typ).at(".type"); len(probs) > 0 {
		return nil, probs
	}
	var probs cfgProblems
	known := slices.Sorted(slices.Values(append([]string{"name"}, checkOptions[typ]...)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "type" && !slices.Contains(known, k) {
			probs = append(probs, cfgProblem{"." + k, fmt.Sprintf("unknown option for the %s checker (known: %s)%s", typ, strings.Join(known, ", "), cfgSuggestFrom(k, known))})
		}
	}
	for _, r := range checkRequired[typ] {
		if _, ok := m[r]; !ok {
			probs = append(probs, cfgProblem{"." + r, "missing: the " + typ + " checker needs it"})
		}
	}
	if name, ok := m["name"]; ok {
		if s, _ := name.(string); strings.TrimSpace(s) == "" {
			probs = append(probs, cfgProblem{".name", "must be a non-empty string, got " + cfgDescribe(name)})
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	out := maps.Clone(checkDefaults[typ])
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, m)
	return out, nil
}

func checkTypeProblems(typ string) cfgProblems {
	if slices.Contains(CheckTypes, typ) {
		return nil
	}
	return cfgProblems{{"", fmt.Sprintf("unknown checker %q (want one of %s)", typ, strings.Join(CheckTypes, ", "))}}
}

// problems checks a decoded spec: its type, its options' values (their
// rule tags), nested checks in turn.
// Validate is the first problem of a spec Load would refuse (nil: none).
func (s CheckSpec) Validate() error {
	if probs := s.problems(); len(probs) > 0 {
		return fmt.Errorf("%s: %s", probs[0].sub, probs[0].msg)
	}
	return nil
}

func (s CheckSpec) problems() cfgProblems {
	if probs := checkTypeProblems(s.Type).at(".type"); len(probs) > 0 {
		return probs
	}
	var probs cfgProblems
	v := reflect.ValueOf(s)
	for _, f := range reflect.VisibleFields(v.Type()) {
		if opt := f.Tag.Get("koanf"); slices.Contains(checkOptions[s.Type], opt) && f.Tag.Get("rule") != "" {
			probs = append(probs, cfgRule(f.Tag.Get("rule"), v.FieldByIndex(f.Index).Interface()).at("."+opt)...)
		}
	}
	nonEmpty := func(sub string, items []string) {
		for i, it := range items {
			if strings.TrimSpace(it) == "" {
				probs = append(probs, cfgProblem{fmt.Sprintf("%s[%d]", sub, i), "must not be empty"})
			}
		}
	}
	switch s.Type {
	case "promise":
		nonEmpty(".texts", s.Texts)
	case "command":
		if strings.TrimSpace(s.Run) == "" {
			probs = append(cfgProblems{{".run", "must not be empty"}}, probs...)
		}
	case "files":
		if len(s.Paths) == 0 {
			probs = append(probs, cfgProblem{".paths", "must list at least one path"})
		}
		nonEmpty(".paths", s.Paths)
	case "composite":
		if s.Mode != "" && s.Mode != "all_must_pass" && s.Mode != "any" {
			probs = append(probs, cfgProblem{".mode", fmt.Sprintf("must be all_must_pass or any, got %q", s.Mode)})
		}
		if len(s.Checks) == 0 {
			probs = append(probs, cfgProblem{".checks", "must list at least one check"})
		}
		for i, c := range s.Checks {
			probs = append(probs, c.problems().at(fmt.Sprintf(".checks[%d]", i))...)
		}
	}
	return probs
}

// MarshalJSON writes the spec as it could be written in project.yaml: the
// bare type when it has neither name nor options, else an object with the
// options of its type that are set (durations in Go syntax).
func (s CheckSpec) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": s.Type}
	v := reflect.ValueOf(s)
	for _, f := range reflect.VisibleFields(v.Type()) {
		opt, fv := f.Tag.Get("koanf"), v.FieldByIndex(f.Index)
		if (opt == "name" || slices.Contains(checkOptions[s.Type], opt)) && !fv.IsZero() {
			m[opt] = fv.Interface()
			if d, ok := m[opt].(time.Duration); ok {
				m[opt] = FormatDuration(d)
			}
		}
	}
	if len(m) == 1 {
		return json.Marshal(s.Type)
	}
	return json.Marshal(m)
}
