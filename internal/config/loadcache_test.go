package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/trust"
)

// TestConfigCache: an entry of this build is what the next Load uses (a
// tampered one shows it); one of another build, one that does not decode,
// one naming an unknown key or a value its rule refuses is passed over and
// the file parsed (and the entry written again).
func TestConfigCache(t *testing.T) {
	dir := cfgProject(t, "workflow:\n  stop_hook:\n    max_cycles: 7\n")
	data, err := os.ReadFile(filepath.Join(dir, ProjectFile))
	if err != nil {
		t.Fatal(err)
	}
	cache := &ConfigCache{Dir: t.TempDir(), Build: "b1"}
	opts := LoadOptions{StartDir: dir, Cache: cache}
	if cfg, _ := cfgLoad(t, opts); cfg.Workflow.StopHook.MaxCycles != 7 {
		t.Fatalf("max_cycles = %d", cfg.Workflow.StopHook.MaxCycles)
	}
	entry := cache.path(trust.Sum(data))
	write := func(e cfgCacheEntry) {
		out, _ := json.Marshal(e)
		if err := os.WriteFile(entry, out, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	read := func() cfgCacheEntry {
		var e cfgCacheEntry
		out, _ := os.ReadFile(entry)
		if err := json.Unmarshal(out, &e); err != nil {
			t.Fatalf("entry %s: %v", out, err)
		}
		return e
	}
	if e := read(); e.Build != "b1" || string(e.Values["workflow.stop_hook.max_cycles"]) != "7" || len(e.Values) != 1 {
		t.Fatalf("entry after the first Load: %+v", e)
	}
	for _, c := range []struct {
		name  string
		entry cfgCacheEntry
		raw   string
		want  int
	}{
		{"this build's entry is used", cfgCacheEntry{Build: "b1", Values: map[string]string{"workflow.stop_hook.max_cycles": "11"}}, "", 11},
		{"another build's is not", cfgCacheEntry{Build: "b0", Values: map[string]string{"workflow.stop_hook.max_cycles": "11"}}, "", 7},
		{"a value that does not decode", cfgCacheEntry{Build: "b1", Values: map[string]string{"workflow.stop_hook.max_cycles": `"x"`}}, "", 7},
		{"a value its rule refuses", cfgCacheEntry{Build: "b1", Values: map[string]string{"workflow.stop_hook.max_cycles": "-3"}}, "", 7},
		{"an unknown key", cfgCacheEntry{Build: "b1", Values: map[string]string{"no.such": "1"}}, "", 7},
		{"not JSON", cfgCacheEntry{}, "{", 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.raw != "" {
				os.WriteFile(entry, []byte(c.raw), 0o600)
			} else {
				write(c.entry)
			}
			cfg, src := cfgLoad(t, opts)
			if cfg.Workflow.StopHook.MaxCycles != c.want || src["workflow.stop_hook.max_cycles"] != filepath.Join(dir, ProjectFile) {
				t.Errorf("max_cycles = %d from %q, want %d from the file", cfg.Workflow.StopHook.MaxCycles, src["workflow.stop_hook.max_cycles"], c.want)
			}
			if c.want == 7 {
				if e := read(); e.Build != "b1" || string(e.Values["workflow.stop_hook.max_cycles"]) != "7" {
					t.Errorf("the entry was not written again: %+v", e)
				}
			}
		})
	}
	// A file with a problem is never cached.
	bad := cfgProject(t, "workflow:\n  stop_hook:\n    max_cycles: many\n")
	badCache := &ConfigCache{Dir: t.TempDir(), Build: "b1"}
	if _, _, err := Load(LoadOptions{StartDir: bad, Cache: badCache}); err == nil || !strings.Contains(err.Error(), "max_cycles") {
		t.Fatalf("bad file loaded: %v", err)
	}
	if entries, _ := os.ReadDir(badCache.Dir); len(entries) != 0 {
		t.Errorf("a file that does not load was cached: %v", entries)
	}
}

// TestConfigCacheTwoBuilds: two builds (runtasks and runtasks-hook) that
// load the same file keep an entry each, so that running them in turn does
// not parse the file at every Load.
func TestConfigCacheTwoBuilds(t *testing.T) {
	dir := cfgProject(t, "workflow:\n  stop_hook:\n    max_cycles: 7\n")
	data, _ := os.ReadFile(filepath.Join(dir, ProjectFile))
	cacheDir := t.TempDir()
	a, b := &ConfigCache{Dir: cacheDir, Build: "runtasks"}, &ConfigCache{Dir: cacheDir, Build: "runtasks-hook"}
	for _, c := range []*ConfigCache{a, b, a, b} {
		cfgLoad(t, LoadOptions{StartDir: dir, Cache: c})
	}
	if entries, _ := os.ReadDir(cacheDir); len(entries) != 2 || a.path(trust.Sum(data)) == b.path(trust.Sum(data)) {
		t.Fatalf("entries %v: want one per build", entries)
	}
	// a's entry is a's: a tampered value shows it is read.
	out, _ := json.Marshal(cfgCacheEntry{Build: "runtasks", Values: map[string]string{"workflow.stop_hook.max_cycles": "12"}})
	os.WriteFile(a.path(trust.Sum(data)), out, 0o600)
	if cfg, _ := cfgLoad(t, LoadOptions{StartDir: dir, Cache: a}); cfg.Workflow.StopHook.MaxCycles != 12 {
		t.Errorf("max_cycles = %d: the entry was not used", cfg.Workflow.StopHook.MaxCycles)
	}
	if cfg, _ := cfgLoad(t, LoadOptions{StartDir: dir, Cache: b}); cfg.Workflow.StopHook.MaxCycles != 7 {
		t.Errorf("max_cycles = %d from the other build's entry", cfg.Workflow.StopHook.MaxCycles)
	}
}

// TestConfigCachePrune: the cache keeps at most cfgCacheMax entries.
func TestConfigCachePrune(t *testing.T) {
	cache := &ConfigCache{Dir: t.TempDir(), Build: "b1"}
	for i := 0; i < cfgCacheMax+5; i++ {
		dir := cfgProject(t, "workflow:\n  epic: bd-"+strings.Repeat("x", i+1)+"\n")
		cfgLoad(t, LoadOptions{StartDir: dir, Cache: cache})
	}
	if entries, _ := os.ReadDir(cache.Dir); len(entries) != cfgCacheMax {
		t.Errorf("%d entries, want %d", len(entries), cfgCacheMax)
	}
}

// TestConfigCacheDefaultValues: a project.yaml that sets every key, all
// but one to its default (as runtasks install writes it), is cached as
// that one value and the names of the rest; the Load that reads the
// entry gives the configuration and the sources of a Load that parses
// the file, with the environment still over the file.
func TestConfigCacheDefaultValues(t *testing.T) {
	defaults, err := os.ReadFile("defaults.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(defaults), "    max_cycles: 50\n", "    max_cycles: 7\n", 1)
	if body == string(defaults) {
		t.Fatal("defaults.yaml has no max_cycles: 50 line to change")
	}
	dir := cfgProject(t, body)
	data, _ := os.ReadFile(filepath.Join(dir, ProjectFile))
	env := []string{EnvName("workflow.epic") + "=bd-env"}
	want, wantSrc := cfgLoad(t, LoadOptions{StartDir: dir, Environ: env})
	if want.Workflow.StopHook.MaxCycles != 7 || want.Workflow.Epic != "bd-env" {
		t.Fatalf("parsed: max_cycles %d, epic %q", want.Workflow.StopHook.MaxCycles, want.Workflow.Epic)
	}
	cache := &ConfigCache{Dir: t.TempDir(), Build: "b1"}
	for _, pass := range []string{"miss", "hit"} {
		got, gotSrc := cfgLoad(t, LoadOptions{StartDir: dir, Environ: env, Cache: cache})
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotSrc, wantSrc) {
			t.Errorf("cache %s: Load differs from the parse:\n got %#v %v\nwant %#v %v", pass, *got, gotSrc, *want, wantSrc)
		}
	}
	var e cfgCacheEntry
	out, _ := os.ReadFile(cache.path(trust.Sum(data)))
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("entry %s: %v", out, err)
	}
	if len(e.Values) != 1 || string(e.Values["workflow.stop_hook.max_cycles"]) != "7" {
		t.Errorf("entry values %v, want max_cycles alone", e.Values)
	}
	if len(e.Defaults) != len(ConfigKeys())-1 || slices.Contains(e.Defaults, "workflow.stop_hook.max_cycles") {
		t.Errorf("entry defaults: %d keys, want every key (%d) but max_cycles", len(e.Defaults), len(ConfigKeys()))
	}
}

// withoutYAML runs f as the hook-only build (runtasks-hook) loads: no
// YAML parser linked. decode is a DecodeFile that decodes as runtasks
// (a build with the parser) does, counting its calls.
func withoutYAML(t *testing.T, f func(decode func(string, []byte) ([]byte, error), calls *int)) {
	parse := cfgParseYAML
	if parse == nil {
		t.Skip("this build links no YAML parser")
	}
	cfgParseYAML = nil
	defer func() { cfgParseYAML = parse }()
	calls := 0
	f(func(src string, data []byte) ([]byte, error) {
		calls++
		cfgParseYAML = parse
		defer func() { cfgParseYAML = nil }()
		return DecodeFileEntry(src, data)
	}, &calls)
}

// TestConfigDecodedElsewhere: a build without a YAML parser has its
// project.yaml decoded elsewhere once per content (LoadOptions.DecodeFile)
// and reads it from its cache after; the configuration, the sources and
// every problem are those of a build that parses the file itself.
func TestConfigDecodedElsewhere(t *testing.T) {
	env := []string{EnvName("workflow.epic") + "=bd-env"}
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"a value and the environment over the file", "workflow:\n  epic: bd-file\n  stop_hook:\n    max_cycles: 7\n    next_ids: 3\n", true},
		{"problems", "workflow:\n  stop_hook:\n    max_cycles: many\n  no_such_key: 1\n", false},
		{"not YAML", "workflow:\n  stop_hook: [\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := cfgProject(t, c.body)
			want, wantSrc, wantErr := Load(LoadOptions{StartDir: dir, Environ: env})
			if (wantErr == nil) != c.ok {
				t.Fatalf("parsed: %v", wantErr)
			}
			withoutYAML(t, func(decode func(string, []byte) ([]byte, error), calls *int) {
				cache := &ConfigCache{Dir: t.TempDir(), Build: "hook"}
				for pass := 1; pass <= 2; pass++ {
					got, gotSrc, err := Load(LoadOptions{StartDir: dir, Environ: env, Cache: cache, DecodeFile: decode})
					if c.ok && (err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotSrc, wantSrc)) {
						t.Errorf("load %d: differs from the parse (%v):\n got %#v %v\nwant %#v %v", pass, err, got, gotSrc, want, wantSrc)
					}
					if !c.ok && (err == nil || err.Error() != wantErr.Error()) {
						t.Errorf("load %d: error\n%v\nwant\n%v", pass, err, wantErr)
					}
				}
				entries, _ := os.ReadDir(cache.Dir)
				switch {
				case c.ok && (*calls != 1 || len(entries) != 1):
					t.Errorf("decoded %d times, %d cache entries: want once, and one entry", *calls, len(entries))
				case !c.ok && len(entries) != 0:
					t.Errorf("a file with problems was cached: %v", entries)
				}
			})
		})
	}
	// Nothing to decode with, or a decoder that fails: the file's problem,
	// never the defaults in silence.
	dir := cfgProject(t, "workflow:\n  stop_hook:\n    max_cycles: 7\n")
	withoutYAML(t, func(func(string, []byte) ([]byte, error), *int) {
		for _, c := range []struct {
			decode func(string, []byte) ([]byte, error)
			want   string
		}{
			{nil, "reads no YAML"},
			{func(string, []byte) ([]byte, error) { return nil, errors.New("runtasks: not found") }, "runtasks: not found"},
			{func(string, []byte) ([]byte, error) { return []byte("{"), nil }, "not an entry"},
		} {
			_, _, err := Load(LoadOptions{StartDir: dir, Cache: &ConfigCache{Dir: t.TempDir(), Build: "hook"}, DecodeFile: c.decode})
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ProjectFile)+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want the file's, saying %q", err, c.want)
			}
		}
	})
}
