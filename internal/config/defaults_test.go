package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSchema: the keys Load uses are Config's fields that are not structs,
// each at its path of koanf tags; the structs are sections.
func TestSchema(t *testing.T) {
	for _, key := range cfgKeys {
		f := cfgField(key)
		if name := key[strings.LastIndex(key, ".")+1:]; f.Type == nil || f.Tag.Get("koanf") != name {
			t.Errorf("%s: the field is %+v", key, f)
		} else if f.Type.Kind() == reflect.Struct {
			t.Errorf("%s is a section, not a key", key)
		}
	}
	for _, section := range []string{"workflow", "workflow.stop_hook", "workflow.budget", "beads", "usage"} {
		if f := cfgField(section); f.Type == nil || f.Type.Kind() != reflect.Struct || slices.Contains(cfgKeys, section) {
			t.Errorf("%s is not a section", section)
		}
	}
	if got := ConfigKeys(); len(cfgKeys) != len(got) || !slices.Contains(got, "usage.prices") || !slices.IsSorted(got) {
		t.Errorf("ConfigKeys() = %v, cfgKeys has %d", got, len(cfgKeys))
	}
}

// The defaults are not checked at every Load: this test is their check.
func TestDefaultsValid(t *testing.T) {
	def := Defaults()
	for _, key := range cfgKeys {
		v, _ := def.Value(key)
		if probs := cfgRule(cfgField(key).Tag.Get("rule"), v); len(probs) > 0 {
			t.Errorf("the default of %s: %v", key, probs)
		}
	}
}

// TestDefaultConfigFresh: two calls share no backing array, so that a
// caller (or Load's layers) may change one without touching the other.
func TestDefaultConfigFresh(t *testing.T) {
	a, b := Defaults(), Defaults()
	pa, pb := cfgSlicePointers(reflect.ValueOf(a)), cfgSlicePointers(reflect.ValueOf(b))
	if len(pa) == 0 {
		t.Fatal("the defaults hold no list: the test checks nothing")
	}
	for p, where := range pa {
		if other, ok := pb[p]; ok {
			t.Errorf("%s of one call and %s of another share their array", where, other)
		}
	}
}

// cfgSlicePointers maps the backing array of every non-empty slice in v to
// where it is.
func cfgSlicePointers(v reflect.Value) map[uintptr]string {
	out := map[uintptr]string{}
	var walk func(v reflect.Value, at string)
	walk = func(v reflect.Value, at string) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), at+"."+v.Type().Field(i).Name)
			}
		case reflect.Slice:
			if v.Len() > 0 {
				out[v.Pointer()] = at
			}
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", at, i))
			}
		case reflect.Pointer, reflect.Map, reflect.Interface:
			if !v.IsNil() {
				out[v.Pointer()] = at
			}
		}
	}
	walk(v, "Config")
	return out
}
