package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// cfgHook converts a value to its field's type, strictly: only in a weak
// layer (environment, flags) is text a number, a boolean or a list. Any
// other mismatch is an error saying what the field takes.
func cfgHook(weak bool) mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		v, kind := reflect.ValueOf(data), to.Kind()
		num, text := v.CanInt() || v.CanUint() || v.CanFloat(), weak && v.Kind() == reflect.String
		out, err := data, error(nil)
		switch s := strings.TrimSpace(fmt.Sprint(data)); {
		case from == to || kind == reflect.Interface:
		case to == reflect.TypeFor[Promise]() && v.Kind() == reflect.String:
			out = map[string]any{"text": data}
		case to == reflect.TypeFor[CheckSpec]():
			return cfgCheckSpec(data)
		case to == reflect.TypeFor[time.Duration]() && (num || v.Kind() == reflect.String):
			out, err = time.ParseDuration(s)
		case kind == reflect.Int && (num || text):
			out, err = strconv.Atoi(s)
		case kind == reflect.Bool && text:
			out, err = strconv.ParseBool(s)
		case kind == reflect.Float64 && text:
			out, err = strconv.ParseFloat(s, 64)
		case kind == reflect.Slice && text:
			out = slices.DeleteFunc(regexp.MustCompile(`\s*,\s*`).Split(s, -1), func(s string) bool { return s == "" })
		case !(kind == reflect.Float64 && num || kind == reflect.Slice && v.Kind() == reflect.Slice || kind == reflect.Struct && v.Kind() == reflect.Map):
			err = errors.ErrUnsupported
		}
		if errors.Is(err, strconv.ErrRange) {
			return nil, cfgProblem("", "out of range, got %s", cfgDescribe(data))
		} else if err != nil {
			return nil, cfgProblem("", "expected %s, got %s", cmp.Or(cfgWants[to], cfgWants[kind]), cfgDescribe(data))
		}
		return out, nil
	}
}

// cfgWants says what a field of a type (or a kind) takes.
var cfgWants = map[any]string{reflect.TypeFor[time.Duration](): `a duration such as "90s" or "2h"`,
	reflect.TypeFor[Promise](): "a string or {text, condition}", reflect.TypeFor[CheckSpec](): "a checker name or {type, …}",
	reflect.Bool: "true or false", reflect.Int: "an integer", reflect.String: "a string", reflect.Float64: "a number",
	reflect.Slice: "a list", reflect.Struct: "a mapping of keys"}

func cfgDescribe(v any) string {
	switch reflect.ValueOf(v).Kind() {
	case reflect.String:
		return fmt.Sprintf("string %q", v)
	case reflect.Slice:
		return "a list"
	case reflect.Map:
		return "a mapping"
	case reflect.Bool, reflect.Struct:
		return fmt.Sprint(v)
	}
	return fmt.Sprint("number ", v)
}

// cfgRule checks a value with its rule tag: a range "lo..hi" (">0s": more
// than 0), "a|b" (one of them; "" too after a leading |), "condition",
// "event", "nonempty", "glob" or "regexp". On a list, "required" says it
// must not be empty and the rest applies to each item; a struct is checked
// by its fields' tags.
func cfgRule(tag string, v any) (probs ErrorList) {
	rv, s := reflect.ValueOf(v), fmt.Sprint(v)
	list := cfgLists[strings.Trim(tag, "|")]
	if list == nil && strings.Contains(tag, "|") {
		list = strings.Split(strings.Trim(tag, "|"), "|")
	}
	lo, hi, isRange := strings.Cut(tag, "..")
	switch x := v.(type) {
	case CheckSpec:
		return x.problems()
	case time.Duration:
		s = FormatDuration(x)
	}
	switch {
	case rv.Kind() == reflect.Slice:
		item, required := strings.CutPrefix(tag, "required")
		if required && rv.Len() == 0 {
			return cfgProblem("", "must not be empty")
		}
		for i := range rv.Len() {
			probs = append(probs, cfgRule(strings.TrimPrefix(item, ","), rv.Index(i).Interface()).at(fmt.Sprintf("[%d]", i))...)
		}
	case rv.Kind() == reflect.Struct:
		for _, f := range reflect.VisibleFields(rv.Type()) {
			probs = append(probs, cfgRule(f.Tag.Get("rule"), rv.FieldByIndex(f.Index).Interface()).at("."+f.Tag.Get("koanf"))...)
		}
	case tag == "nonempty" && strings.TrimSpace(s) == "":
		return cfgProblem("", "must not be empty")
	case tag == "glob":
		if _, err := path.Match(s, ""); err != nil || strings.TrimSpace(s) == "" {
			return cfgProblem("", "expected a glob such as claude-sonnet-4*, got %q", s)
		}
	case tag == "regexp":
		if _, err := regexp.Compile(s); err != nil {
			return cfgProblem("", "invalid regular expression: %v", err)
		}
	case list != nil && !slices.Contains(list, s) && (s != "" || tag[0] != '|'):
		return cfgProblem("", "must be one of %s, got %q", strings.Join(list, ", "), s)
	case isRange:
		switch n := rv.Convert(reflect.TypeFor[float64]()).Float(); {
		case lo[0] == '>' && n <= 0:
			return cfgProblem("", "must be more than 0, got %s", s)
		case n < cfgNumber(lo):
			return cfgProblem("", "must be %s or more, got %s", lo, s)
		case n > cfgNumber(hi):
			return cfgProblem("", "must be at most %s, got %s", hi, s)
		}
	}
	return probs
}

var cfgLists = map[string][]string{"condition": Conditions, "event": NotifyEvents}

// cfgNumber is a range's end: a duration or a number.
func cfgNumber(s string) float64 {
	s = strings.TrimPrefix(s, ">")
	if d, err := time.ParseDuration(s); err == nil {
		return float64(d)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// cfgCheckSpec decodes a workflow.checks item: a checker's name, or {type,
// name, …options} with its type's options only, defaults filled in.
func cfgCheckSpec(data any) (any, error) {
	if typ, ok := data.(string); ok {
		data = map[string]any{"type": typ}
	}
	m, ok := data.(map[string]any)
	if !ok {
		return nil, cfgProblem("", "expected %s, got %s", cfgWants[reflect.TypeFor[CheckSpec]()], cfgDescribe(data))
	}
	typ, _ := m["type"].(string)
	if probs := checkType(typ); probs != nil {
		return nil, probs
	}
	var probs ErrorList
	known := slices.Sorted(slices.Values(append([]string{"name"}, checkOptions[typ]...)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "type" && !slices.Contains(known, k) {
			probs = append(probs, cfgProblem("."+k, "unknown option for the %s checker (known: %s)%s", typ, strings.Join(known, ", "), cfgSuggest(k, known))...)
		}
	}
	if name, ok := m["name"].(string); ok && strings.TrimSpace(name) == "" {
		probs = append(probs, cfgProblem(".name", "must not be empty")...)
	}
	if probs != nil {
		return nil, probs
	}
	out := maps.Collect(maps.All(checkDefaults[typ]))
	maps.Copy(out, m)
	return out, nil
}

func checkType(typ string) ErrorList {
	if !slices.Contains(CheckTypes, typ) {
		return cfgProblem(".type", "unknown checker %q (want one of %s)", typ, strings.Join(CheckTypes, ", "))
	}
	return nil
}

// problems checks a decoded spec's type and its type's options.
func (s CheckSpec) problems() (probs ErrorList) {
	v := reflect.ValueOf(s)
	for _, f := range reflect.VisibleFields(v.Type()) {
		if opt := f.Tag.Get("koanf"); slices.Contains(checkOptions[s.Type], opt) {
			probs = append(probs, cfgRule(f.Tag.Get("rule"), v.FieldByIndex(f.Index).Interface()).at("."+opt)...)
		}
	}
	return append(checkType(s.Type), probs...)
}

// Validate is the first problem of a spec Load would refuse (nil: none).
func (s CheckSpec) Validate() error {
	if probs := s.problems(); probs != nil {
		return fmt.Errorf("%s: %s", probs[0].Key, probs[0].Msg)
	}
	return nil
}

// cfgSuggestKey proposes a name for an unknown key: the same name in
// another section, else a close name beside it.
func cfgSuggestKey(key string) string {
	parent, same, near := cfgParent(key), []string{}, []string{}
	name := strings.ToLower(strings.TrimPrefix(key[len(parent):], "."))
	for _, k := range cfgKeys {
		for at := k; at != ""; at = cfgParent(at) {
			if strings.HasSuffix("."+at, "."+name) && !slices.Contains(same, at) {
				same = append(same, at)
			}
		}
	}
	if len(same) == 1 && !strings.HasSuffix(parent, "]") {
		return " (did you mean " + same[0] + "?)"
	}
	for _, f := range reflect.VisibleFields(cfgField(parent).Type) {
		near = append(near, f.Tag.Get("koanf"))
	}
	return cfgSuggest(name, near)
}

// cfgSuggest gives " (did you mean X?)" for the closest candidate within a
// Levenshtein distance that makes it an obvious misspelling.
func cfgSuggest(name string, cands []string) string {
	msg, best, a := "", 3, strings.ToLower(strings.TrimPrefix(name, cfgEnvPrefix))
	for _, c := range cands {
		b := strings.ToLower(strings.TrimPrefix(c, cfgEnvPrefix))
		row := make([]int, len(b)+1)
		for j := range row {
			row[j] = j
		}
		for i := 1; i <= len(a); i++ {
			diag := row[0]
			row[0] = i
			for j := 1; j <= len(b); j++ {
				diag, row[j] = row[j], min(row[j]+1, row[j-1]+1, diag+map[bool]int{true: 1}[a[i-1] != b[j-1]])
			}
		}
		if d := row[len(b)]; d < best && d <= (len(a)+1)/3 {
			msg, best = " (did you mean "+c+"?)", d
		}
	}
	return msg
}
