package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// CheckTypes names the built-in completion checkers.
var CheckTypes = []string{"beads", "promise", "done_token", "command", "files", "plan", "results", "composite"}

// CheckSpec is one workflow.checks item, decoded: the checker's type, its
// name (the type when "") and its options. Only the options of its type
// apply (see docs/checkers.md); composite checks nest.
type CheckSpec struct {
	Type string `koanf:"type"`
	Name string `koanf:"name"`
	// promise: texts that end the loop whatever allow_exit_on says.
	Texts []string `koanf:"texts"`
	// done_token: the done line's prefix ("": workflow.done_token.prefix).
	Prefix string `koanf:"prefix"`
	// command: Run in Dir (relative to the project root) within Timeout;
	// TailLines of its output are the feedback (0: all that was kept).
	Run       string        `koanf:"run"`
	Dir       string        `koanf:"dir"`
	Timeout   time.Duration `koanf:"timeout"`
	TailLines int           `koanf:"tail_lines"`
	// files: Paths that must exist, NonEmpty, changed from Template.
	Paths    []string `koanf:"paths"`
	NonEmpty bool     `koanf:"non_empty"`
	Template string   `koanf:"template"`
	// plan: a plan must be found in the transcript.
	Required bool `koanf:"required"`
	// composite: all_must_pass or any, over Checks.
	Mode   string      `koanf:"mode"`
	Checks []CheckSpec `koanf:"checks"`
}

// checkOptions lists each checker's options, besides type and name.
var checkOptions = map[string][]string{
	"beads":      nil,
	"promise":    {"texts"},
	"done_token": {"prefix"},
	"command":    {"run", "dir", "timeout", "tail_lines"},
	"files":      {"paths", "non_empty", "template"},
	"plan":       {"required"},
	"results":    nil,
	"composite":  {"mode", "checks"},
}

var checkRequired = map[string][]string{
	"command":   {"run"},
	"files":     {"paths"},
	"composite": {"checks"},
}

// The ranges of the checkers' numbers, and composite's modes.
var (
	checkTimeoutRange = cfgDurRange{positive: true, max: 24 * time.Hour}
	checkTailRange    = cfgIntRange{0, 10000}
	checkModes        = []string{"all_must_pass", "any"}
)

// DefaultCheckTimeout is a command check's timeout when it names none.
const DefaultCheckTimeout = 10 * time.Minute

// newCheckSpec is a spec of the type with its options' defaults.
func newCheckSpec(typ string) CheckSpec {
	s := CheckSpec{Type: typ}
	switch typ {
	case "command":
		s.Timeout, s.TailLines = DefaultCheckTimeout, 20
	case "composite":
		s.Mode = checkModes[0]
	}
	return s
}

// checkSpecFields has CheckSpec's fields without cfgCheckSpecHook: an
// object's options decode into it.
type checkSpecFields CheckSpec

// cfgCheckSpecHook decodes a workflow.checks item: a checker name, or an
// object {type, name, …options} whose options must be its type's.
func cfgCheckSpecHook(_, to reflect.Type, data any) (any, error) {
	if to != cfgCheckSpecType {
		return data, nil
	}
	switch v := data.(type) {
	case CheckSpec:
		return v, nil
	case string:
		if probs := checkTypeProblems("", v); probs != nil {
			return nil, probs
		}
		if req := checkRequired[v]; len(req) > 0 {
			return nil, cfgProblems{{"", fmt.Sprintf("the %s checker needs %s: write {type: %s, %s: …}", v, strings.Join(req, ", "), v, req[0])}}
		}
		return newCheckSpec(v), nil
	case map[string]any:
		return checkSpecFromObject(v)
	}
	return nil, cfgTypeError(to, data)
}

func checkTypeProblems(at, typ string) cfgProblems {
	if slices.Contains(CheckTypes, typ) {
		return nil
	}
	return cfgProblems{{at, fmt.Sprintf("unknown checker %q (want one of %s)", typ, strings.Join(CheckTypes, ", "))}}
}

func checkSpecFromObject(m map[string]any) (CheckSpec, error) {
	typ, ok := m["type"].(string)
	if !ok {
		return CheckSpec{}, cfgProblems{{".type", "missing: a check object needs its type (" + strings.Join(CheckTypes, ", ") + ")"}}
	}
	if probs := checkTypeProblems(".type", typ); probs != nil {
		return CheckSpec{}, probs
	}
	var probs cfgProblems
	known := append([]string{"name"}, checkOptions[typ]...)
	slices.Sort(known)
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
	fields := checkSpecFields(newCheckSpec(typ))
	if err := cfgDecode(m, &fields, false); err != nil {
		return CheckSpec{}, append(probs, cfgFlatten(err)...)
	}
	spec := CheckSpec(fields)
	if name, ok := m["name"]; ok && name != nil && strings.TrimSpace(spec.Name) == "" {
		probs = append(probs, cfgProblem{".name", "must be a non-empty string, got " + cfgDescribe(name)})
	}
	for _, p := range spec.problems() {
		if !slices.ContainsFunc(probs, func(q cfgProblem) bool { return q.sub == p.sub }) {
			probs = append(probs, p)
		}
	}
	if len(probs) > 0 {
		return CheckSpec{}, probs
	}
	return spec, nil
}

// Validate is the first problem of a spec Load would refuse, as
// "<option>: <what is wrong>" (".run: must not be empty"); nil for a
// valid spec.
func (s CheckSpec) Validate() error {
	if probs := s.problems(); len(probs) > 0 {
		return fmt.Errorf("%s: %s", probs[0].sub, probs[0].msg)
	}
	return nil
}

// problems checks a spec's values: its type, required options and ranges,
// nested checks in turn.
func (s CheckSpec) problems() cfgProblems {
	if probs := checkTypeProblems(".type", s.Type); probs != nil {
		return probs
	}
	var probs cfgProblems
	at := func(sub string, ps []cfgProblem) {
		for _, p := range ps {
			probs = append(probs, cfgProblem{sub + p.sub, p.msg})
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
			probs = append(probs, cfgProblem{".run", "must not be empty"})
		}
		at(".timeout", checkTimeoutRange.check(s.Timeout))
		at(".tail_lines", checkTailRange.check(s.TailLines))
	case "files":
		if len(s.Paths) == 0 {
			probs = append(probs, cfgProblem{".paths", "must list at least one path"})
		}
		nonEmpty(".paths", s.Paths)
	case "composite":
		if s.Mode != "" && !slices.Contains(checkModes, s.Mode) {
			probs = append(probs, cfgProblem{".mode", fmt.Sprintf("must be %s, got %q", strings.Join(checkModes, " or "), s.Mode)})
		}
		if len(s.Checks) == 0 {
			probs = append(probs, cfgProblem{".checks", "must list at least one check"})
		}
		for i, c := range s.Checks {
			at(fmt.Sprintf(".checks[%d]", i), c.problems())
		}
	}
	return probs
}

// MarshalJSON writes the spec as it could be written in project.yaml: the
// bare type when it has neither name nor options, else an object with the
// options of its type that are set (durations in Go syntax).
func (s CheckSpec) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": s.Type}
	if s.Name != "" {
		m["name"] = s.Name
	}
	v := reflect.ValueOf(s)
	for _, opt := range checkOptions[s.Type] {
		f := v.FieldByIndex(checkOptionField()[opt])
		if f.IsZero() {
			continue
		}
		if d, ok := f.Interface().(time.Duration); ok {
			m[opt] = FormatDuration(d)
		} else {
			m[opt] = f.Interface()
		}
	}
	if len(m) == 1 {
		return json.Marshal(s.Type)
	}
	return json.Marshal(m)
}

// checkOptionField is each option's field in CheckSpec (made at first
// use: a hook pays only for what it reads).
var checkOptionField = sync.OnceValue(func() map[string][]int {
	out := map[string][]int{}
	for _, f := range reflect.VisibleFields(cfgCheckSpecType) {
		out[f.Tag.Get("koanf")] = f.Index
	}
	return out
})
