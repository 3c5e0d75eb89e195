package orchestrator

import (
	_ "embed"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	kmaps "github.com/knadh/koanf/maps"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// LoadOptions says where Load finds each configuration layer.
type LoadOptions struct {
	// ConfigFile is an explicit project.yaml (--config); "" = RUNTASKS_CONFIG
	// from Environ, else found by walking up from StartDir.
	ConfigFile string
	// StartDir is where the project root search begins (the hook's cwd).
	StartDir string
	// Environ is the process environment (RUNTASKS_* and TASKMASTER_* apply).
	Environ []string
	// Flags are the command's flags; changed ones override (see FlagKeys).
	Flags *pflag.FlagSet
}

// Sources maps each configuration key to the layer that set its value:
// "default", the project.yaml path, "env NAME" or "flag --name".
type Sources map[string]string

// ProjectFile is the name of the project configuration file.
const ProjectFile = "project.yaml"

// EnvConfig names the environment variable that selects the project.yaml to
// read. It is not a configuration key.
const EnvConfig = "RUNTASKS_CONFIG"

// SourceDefault is the source of a value no layer overrode.
const SourceDefault = "default"

const cfgEnvPrefix = "RUNTASKS_"

// FlagKeys maps command-line flags to the keys they set. Only flags the user
// changed override the layers below.
var FlagKeys = map[string]string{
	"epic":       "workflow.epic",
	"max-cycles": "workflow.stop_hook.max_cycles",
	"log-level":  "log.level",
	"bd":         "beads.bin",
	"state-dir":  "state.dir",
	"taskmaster": "workflow.done_token.required",
}

// EnvAliases maps short environment variables to the keys they set, besides
// the long form RUNTASKS_<SECTION>__<KEY> that every key has. When several
// variables set one key, the long form wins over a RUNTASKS_ alias, which
// wins over a TASKMASTER_ variable.
var EnvAliases = map[string]string{
	"RUNTASKS_EPIC":          "workflow.epic",
	"RUNTASKS_BD":            "beads.bin",
	"RUNTASKS_BEADS_DIR":     "beads.dir",
	"RUNTASKS_STATE_DIR":     "state.dir",
	"RUNTASKS_LOG_LEVEL":     "log.level",
	"RUNTASKS_LOG_FILE":      "log.file",
	"RUNTASKS_MAX_CYCLES":    "workflow.stop_hook.max_cycles",
	"TASKMASTER_DONE_PREFIX": "workflow.done_token.prefix",
	"TASKMASTER_MAX":         "workflow.done_token.max",
}

// cfgEnvNonKeys are RUNTASKS_ variables that are not configuration keys.
var cfgEnvNonKeys = map[string]bool{EnvConfig: true}

// Conditions lists the promise conditions, valid in allow_exit_on and in a
// completion promise's condition.
var Conditions = []string{CondAllComplete, CondAllBlocked, CondContextCheckpoint, CondAlways}

// cfgKnownPromises gives the documented promise texts their conditions; any
// other bare text needs beads to agree that all is complete.
var cfgKnownPromises = map[string]string{
	"ALL TASKS COMPLETE":         CondAllComplete,
	"EPIC COMPLETE":              CondAllComplete,
	"BLOCKED - NEEDS USER":       CondAllBlocked,
	"CONTEXT LIMIT - CHECKPOINT": CondContextCheckpoint,
}

var (
	cfgLogLevels     = []string{"debug", "info", "warn", "error"}
	cfgBeadsErrModes = []string{"allow", "block"}
	cfgSubagentModes = []string{"allow", "drive"}
	cfgStuckActions  = []string{"block", "reopen", "report"}
	cfgRunAgents     = []string{"claude", "codex"}
	cfgRunSessions   = []string{"fresh", "resume"}
)

//go:embed defaults.yaml
var cfgDefaultsYAML []byte

// KeyError is one configuration problem, in one layer.
type KeyError struct {
	// Source is the layer: the file path, "env NAME", "flag --name" or
	// "default".
	Source string
	// Key is the key (with a list index or promise field when that is where
	// the problem is); "" when the problem is not one key's.
	Key string
	Msg string
}

func (e *KeyError) Error() string {
	if e.Key == "" {
		return e.Source + ": " + e.Msg
	}
	return e.Source + ": " + e.Key + ": " + e.Msg
}

// ErrorList is every problem Load or ValidateFile found, one per line.
type ErrorList []*KeyError

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives the problems to errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Load merges, lowest first, the embedded defaults, the project.yaml,
// the environment and the changed flags. Each layer is checked on its own,
// so that an error names its source; every problem found is returned as an
// ErrorList.
func Load(opts LoadOptions) (*Config, *Sources, error) {
	root, path, err := FindProject(opts)
	if err != nil {
		return nil, nil, err
	}
	k := koanf.New(".")
	src := Sources{}
	var errs ErrorList
	apply := func(entries []cfgEntry, bad []*KeyError) error {
		errs = append(errs, bad...)
		flat := make(map[string]any, len(entries))
		for _, e := range entries {
			flat[e.key] = e.val
			src[e.key] = e.src
		}
		return k.Load(confmap.Provider(flat, "."), nil)
	}

	if err := apply(cfgFileEntries(SourceDefault, cfgDefaultsYAML)); err != nil {
		return nil, nil, err
	}
	if path != "" {
		data, err := file.Provider(path).ReadBytes()
		if err != nil {
			return nil, nil, fmt.Errorf("read configuration: %w", err)
		}
		if err := apply(cfgFileEntries(path, data)); err != nil {
			return nil, nil, err
		}
	}
	if err := apply(cfgEnvEntries(opts.Environ)); err != nil {
		return nil, nil, err
	}
	if opts.Flags != nil {
		entries, bad, err := cfgFlagEntries(opts.Flags)
		if err != nil {
			return nil, nil, err
		}
		if err := apply(entries, bad); err != nil {
			return nil, nil, err
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}

	var cfg Config
	if err := k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{Tag: "koanf"}); err != nil {
		return nil, nil, fmt.Errorf("decode configuration: %w", err)
	}
	cfg.Root, cfg.File = root, path
	return &cfg, &src, nil
}

// ValidateFile checks one project.yaml on its own: YAML syntax, unknown
// keys, types and values. Problems are returned as an ErrorList.
func ValidateFile(path string) error {
	data, err := file.Provider(path).ReadBytes()
	if err != nil {
		return fmt.Errorf("read configuration: %w", err)
	}
	return ValidateYAML(path, data)
}

// ValidateYAML checks a project.yaml's content as ValidateFile does; name
// is the source its errors give.
func ValidateYAML(name string, data []byte) error {
	if _, bad := cfgFileEntries(name, data); len(bad) > 0 {
		return ErrorList(bad)
	}
	return nil
}

// FindProject finds the project root and the project.yaml that Load reads
// ("" when there is none). An explicit file (ConfigFile, else RUNTASKS_CONFIG)
// must exist; relative, it is taken from StartDir; the root is its directory.
// Otherwise the root is the first directory from StartDir upwards that holds
// project.yaml, .beads or .git, and its project.yaml is read if present;
// when none does, the root is StartDir and no file is read.
func FindProject(opts LoadOptions) (root, path string, err error) {
	start := opts.StartDir
	if start == "" {
		if start, err = os.Getwd(); err != nil {
			return "", "", fmt.Errorf("find project: %w", err)
		}
	}
	if start, err = filepath.Abs(start); err != nil {
		return "", "", fmt.Errorf("find project: %w", err)
	}

	explicit, how := opts.ConfigFile, "--config"
	if explicit == "" {
		explicit, how = cfgLookupEnv(opts.Environ, EnvConfig), "env "+EnvConfig
	}
	if explicit != "" {
		if !filepath.IsAbs(explicit) {
			explicit = filepath.Join(start, explicit)
		}
		if err := cfgRegularFile(explicit); err != nil {
			return "", "", fmt.Errorf("configuration file (%s): %w", how, err)
		}
		return filepath.Dir(explicit), explicit, nil
	}

	for dir := start; ; {
		candidate := filepath.Join(dir, ProjectFile)
		if _, err := os.Stat(candidate); err == nil {
			if err := cfgRegularFile(candidate); err != nil {
				return "", "", fmt.Errorf("configuration file: %w", err)
			}
			return dir, candidate, nil
		}
		for _, marker := range []string{".beads", ".git"} {
			if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
				return dir, "", nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return start, "", nil
		}
		dir = parent
	}
}

func cfgRegularFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	return nil
}

// cfgLookupEnv gives the last value of key in env; "" when unset.
func cfgLookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if name, val, ok := strings.Cut(env[i], "="); ok && name == key {
			return val
		}
	}
	return ""
}

// ConfigKeys lists every configuration key (the leaves), in the order of
// the Config struct.
func ConfigKeys() []string {
	out := make([]string, len(cfgSchema.leaves))
	for i, f := range cfgSchema.leaves {
		out[i] = f.key
	}
	return out
}

// Value is the value of one key, as the Config holds it.
func (c *Config) Value(key string) (any, bool) {
	f, ok := cfgSchema.byKey[key]
	if !ok {
		return nil, false
	}
	return reflect.ValueOf(c).Elem().FieldByIndex(f.index).Interface(), true
}

// Promises resolves completion_promises: a bare string takes the condition
// of the documented text it names (ALL TASKS COMPLETE and EPIC COMPLETE:
// all_complete; BLOCKED - NEEDS USER: all_blocked; CONTEXT LIMIT -
// CHECKPOINT: context_checkpoint), and any other text all_complete, so that
// beads must agree. An object without a condition resolves the same way.
func (c *Config) Promises() []Promise {
	out := make([]Promise, 0, len(c.Workflow.StopHook.CompletionPromises))
	for _, item := range c.Workflow.StopHook.CompletionPromises {
		var p Promise
		switch v := item.(type) {
		case string:
			p.Text = v
		case Promise:
			p = v
		case map[string]any:
			p.Text, _ = v["text"].(string)
			p.Condition, _ = v["condition"].(string)
		case map[string]string:
			p.Text, p.Condition = v["text"], v["condition"]
		case map[any]any:
			p.Text, _ = v["text"].(string)
			p.Condition, _ = v["condition"].(string)
		}
		p.Text = strings.TrimSpace(p.Text)
		if p.Text == "" {
			continue
		}
		if p.Condition == "" {
			p.Condition = cfgPromiseCondition(p.Text)
		}
		out = append(out, p)
	}
	return out
}

func cfgPromiseCondition(text string) string {
	for known, cond := range cfgKnownPromises {
		if strings.EqualFold(text, known) {
			return cond
		}
	}
	return CondAllComplete
}

// AllowsExitOn reports whether allow_exit_on lists the condition.
func (c *Config) AllowsExitOn(cond string) bool {
	return slices.Contains(c.Workflow.StopHook.AllowExitOn, cond)
}

// StateDir is state.dir as an absolute path (relative to the project root).
func (c *Config) StateDir() string {
	return c.rooted(c.State.Dir)
}

// BeadsDir is beads.dir as an absolute path (relative to the project root);
// "" when unset: bd then finds its store from the project root upwards.
func (c *Config) BeadsDir() string {
	if c.Beads.Dir == "" {
		return ""
	}
	return c.rooted(c.Beads.Dir)
}

func (c *Config) rooted(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	root := c.Root
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return filepath.Join(root, p)
}

// The schema: every key, derived from Config's koanf tags.

type cfgKind int

const (
	kindBool cfgKind = iota
	kindInt
	kindString
	kindDuration
	kindStrings
	kindPromises
	kindObjects // a list of names or objects, checked by a rule
)

type cfgField struct {
	key   string
	kind  cfgKind
	index []int
}

type cfgSchemaInfo struct {
	leaves   []*cfgField
	byKey    map[string]*cfgField
	sections map[string]bool
	children map[string][]string // section ("" = top) -> its keys' last parts
}

var cfgSchema = buildSchema()

var cfgDurationType = reflect.TypeFor[time.Duration]()

func buildSchema() *cfgSchemaInfo {
	s := &cfgSchemaInfo{byKey: map[string]*cfgField{}, sections: map[string]bool{}, children: map[string][]string{}}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("koanf")
			if tag == "" || tag == "-" {
				continue
			}
			key := cfgJoinKey(prefix, tag)
			idx := append(slices.Clone(index), i)
			s.children[prefix] = append(s.children[prefix], tag)
			var k cfgKind
			switch t := sf.Type; {
			case t == cfgDurationType:
				k = kindDuration
			case t.Kind() == reflect.Struct:
				s.sections[key] = true
				walk(t, key, idx)
				continue
			case t.Kind() == reflect.Bool:
				k = kindBool
			case t.Kind() == reflect.Int:
				k = kindInt
			case t.Kind() == reflect.String:
				k = kindString
			case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
				k = kindStrings
			case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Interface && tag == "completion_promises":
				k = kindPromises
			case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Interface:
				k = kindObjects
			default:
				panic("orchestrator: config key " + key + " has an unsupported type " + t.String())
			}
			f := &cfgField{key: key, kind: k, index: idx}
			s.leaves = append(s.leaves, f)
			s.byKey[key] = f
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return s
}

func cfgJoinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Layers: each becomes a list of checked, normalised entries.

type cfgEntry struct {
	key, src string
	val      any
}

// cfgProblem is one thing wrong with a value; sub is appended to the key
// ("[2].text").
type cfgProblem struct{ sub, msg string }

// cfgFileEntries parses a YAML layer and checks it.
func cfgFileEntries(src string, data []byte) ([]cfgEntry, []*KeyError) {
	mp, err := yaml.Parser().Unmarshal(data)
	if err != nil {
		return nil, []*KeyError{{Source: src, Msg: err.Error()}}
	}
	kmaps.IntfaceKeysToStrings(mp)
	var (
		entries []cfgEntry
		errs    []*KeyError
	)
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			v, key := m[name], cfgJoinKey(prefix, name)
			switch {
			case cfgSchema.sections[key]:
				switch sub := v.(type) {
				case nil:
				case map[string]any:
					walk(sub, key)
				default:
					errs = append(errs, &KeyError{Source: src, Key: key, Msg: "expected a mapping of keys, got " + cfgDescribe(v)})
				}
			case cfgSchema.byKey[key] != nil:
				if v == nil {
					continue // no value: the layer below stands
				}
				e, bad := cfgCheckValue(cfgSchema.byKey[key], v, false, src)
				errs = append(errs, bad...)
				if len(bad) == 0 {
					entries = append(entries, e)
				}
			default:
				errs = append(errs, &KeyError{Source: src, Key: key, Msg: "unknown key" + cfgSuggestKey(prefix, name)})
			}
		}
	}
	walk(mp, "")
	return entries, errs
}

// cfgEnvEntries reads RUNTASKS_* (and the TASKMASTER_ knobs) from environ. An
// unknown RUNTASKS_ variable is an error.
func cfgEnvEntries(environ []string) ([]cfgEntry, []*KeyError) {
	// koanf's env provider collects the variables runtasks reads (its own
	// prefix and the aliases), by name; the names are resolved to keys below
	// because several names may set one key.
	raw, err := env.Provider("", env.Opt{
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, val string) (string, any) {
			if strings.HasPrefix(name, cfgEnvPrefix) || EnvAliases[name] != "" {
				return name, val
			}
			return "", nil
		},
	}).Read()
	if err != nil {
		return nil, []*KeyError{{Source: "env", Msg: err.Error()}}
	}
	vals := make(map[string]string, len(raw))
	for name, val := range raw {
		vals[name] = val.(string)
	}
	type pick struct {
		name, val string
		rank      int
	}
	best := map[string]pick{}
	var errs []*KeyError
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		var key string
		var rank int
		switch {
		case EnvAliases[name] != "":
			key, rank = EnvAliases[name], 1
			if strings.HasPrefix(name, cfgEnvPrefix) {
				rank = 2
			}
		case cfgEnvNonKeys[name]:
			continue
		case strings.HasPrefix(name, cfgEnvPrefix):
			key, rank = EnvKey(name), 3
			if cfgSchema.byKey[key] == nil {
				errs = append(errs, &KeyError{Source: "env " + name, Msg: "unknown variable" + cfgSuggestEnv(name)})
				continue
			}
		default:
			continue
		}
		if cur, ok := best[key]; !ok || rank > cur.rank {
			best[key] = pick{name: name, val: vals[name], rank: rank}
		}
	}
	var entries []cfgEntry
	for _, f := range cfgSchema.leaves {
		p, ok := best[f.key]
		if !ok {
			continue
		}
		e, bad := cfgCheckValue(f, p.val, true, "env "+p.name)
		errs = append(errs, bad...)
		if len(bad) == 0 {
			entries = append(entries, e)
		}
	}
	return entries, errs
}

// EnvName is the long environment variable of a key:
// workflow.stop_hook.max_cycles -> RUNTASKS_WORKFLOW__STOP_HOOK__MAX_CYCLES.
func EnvName(key string) string {
	return cfgEnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// EnvKey is the key a long RUNTASKS_ variable names (it may not exist).
func EnvKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, cfgEnvPrefix), "__", "."))
}

// cfgFlagEntries reads the changed flags that FlagKeys names, through koanf's
// posflag provider.
func cfgFlagEntries(fs *pflag.FlagSet) ([]cfgEntry, []*KeyError, error) {
	names := map[string]string{} // key -> flag name
	p := posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		key, ok := FlagKeys[f.Name]
		if !ok || !f.Changed {
			return "", nil
		}
		names[key] = f.Name
		return key, posflag.FlagVal(fs, f)
	})
	mp, err := p.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("read flags: %w", err)
	}
	flat, _ := kmaps.Flatten(mp, nil, ".")
	var (
		entries []cfgEntry
		errs    []*KeyError
	)
	for _, f := range cfgSchema.leaves {
		v, ok := flat[f.key]
		if !ok {
			continue
		}
		e, bad := cfgCheckValue(f, v, true, "flag --"+names[f.key])
		errs = append(errs, bad...)
		if len(bad) == 0 {
			entries = append(entries, e)
		}
	}
	return entries, errs, nil
}

// Values: types, then rules.

// cfgCheckValue converts v to the key's type and checks the key's rules. weak
// layers (environment, flags) give strings to parse; a file's YAML types
// must match.
func cfgCheckValue(f *cfgField, v any, weak bool, src string) (cfgEntry, []*KeyError) {
	val, probs := cfgCoerce(f.kind, v, weak)
	if len(probs) == 0 {
		if rule := cfgRules[f.key]; rule != nil {
			probs = rule(val)
		}
	}
	var errs []*KeyError
	for _, p := range probs {
		errs = append(errs, &KeyError{Source: src, Key: f.key + p.sub, Msg: p.msg})
	}
	return cfgEntry{key: f.key, src: src, val: val}, errs
}

func cfgOne(msg string, args ...any) []cfgProblem {
	return []cfgProblem{{msg: fmt.Sprintf(msg, args...)}}
}

func cfgCoerce(k cfgKind, v any, weak bool) (any, []cfgProblem) {
	s, isString := v.(string)
	switch k {
	case kindBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		if isString && weak {
			if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
				return b, nil
			}
		}
		return nil, cfgOne("expected true or false, got %s", cfgDescribe(v))
	case kindInt:
		switch n := v.(type) {
		case int:
			return n, nil
		case int64:
			if n >= math.MinInt && n <= math.MaxInt {
				return int(n), nil
			}
		case uint64:
			if n <= math.MaxInt {
				return int(n), nil
			}
		case string:
			if weak {
				if i, err := strconv.Atoi(strings.TrimSpace(n)); err == nil {
					return i, nil
				}
			}
		}
		return nil, cfgOne("expected an integer, got %s", cfgDescribe(v))
	case kindString:
		if isString {
			return s, nil
		}
		hint := ""
		switch v.(type) {
		case int, int64, uint64, float64, bool, time.Time:
			hint = " (quote it to make it a string)"
		}
		return nil, cfgOne("expected a string, got %s%s", cfgDescribe(v), hint)
	case kindDuration:
		switch d := v.(type) {
		case time.Duration:
			return d, nil
		case string:
			if dur, err := time.ParseDuration(strings.TrimSpace(d)); err == nil {
				return dur, nil
			}
		case int:
			if d == 0 {
				return time.Duration(0), nil
			}
			return nil, cfgOne("expected a duration with a unit such as \"90s\" or \"2h\", got %s", cfgDescribe(v))
		}
		return nil, cfgOne("expected a duration such as \"90s\" or \"2h\", got %s", cfgDescribe(v))
	case kindStrings:
		switch l := v.(type) {
		case []string:
			return slices.Clone(l), nil
		case string:
			if weak {
				return cfgSplitList(l), nil
			}
		case []any:
			out := make([]string, 0, len(l))
			var probs []cfgProblem
			for i, item := range l {
				if str, ok := item.(string); ok {
					out = append(out, str)
				} else {
					probs = append(probs, cfgProblem{fmt.Sprintf("[%d]", i), "expected a string, got " + cfgDescribe(item)})
				}
			}
			return out, probs
		}
		return nil, cfgOne("expected a list, got %s", cfgDescribe(v))
	case kindObjects:
		switch l := v.(type) {
		case []any:
			return slices.Clone(l), nil
		case string:
			if weak {
				var out []any
				for _, str := range cfgSplitList(l) {
					out = append(out, str)
				}
				return out, nil
			}
		}
		return nil, cfgOne("expected a list, got %s", cfgDescribe(v))
	case kindPromises:
		var items []any
		switch l := v.(type) {
		case []any:
			items = l
		case []string:
			for _, str := range l {
				items = append(items, str)
			}
		case string:
			if !weak {
				return nil, cfgOne("expected a list of promises, got %s", cfgDescribe(v))
			}
			for _, str := range cfgSplitList(l) {
				items = append(items, str)
			}
		default:
			return nil, cfgOne("expected a list of promises, got %s", cfgDescribe(v))
		}
		return cfgCoercePromises(items)
	}
	return nil, cfgOne("unsupported type")
}

func cfgCoercePromises(items []any) (any, []cfgProblem) {
	out := make([]any, 0, len(items))
	var probs []cfgProblem
	for i, item := range items {
		at := fmt.Sprintf("[%d]", i)
		switch p := item.(type) {
		case string:
			if strings.TrimSpace(p) == "" {
				probs = append(probs, cfgProblem{at, "empty promise text"})
				continue
			}
			out = append(out, p)
		case map[string]any:
			obj := map[string]any{}
			for _, name := range slices.Sorted(maps.Keys(p)) {
				if name != "text" && name != "condition" {
					probs = append(probs, cfgProblem{at + "." + name, "unknown key" + cfgSuggestFrom(name, []string{"text", "condition"}) + " (a promise has text and condition)"})
				}
			}
			switch text := p["text"].(type) {
			case string:
				if strings.TrimSpace(text) == "" {
					probs = append(probs, cfgProblem{at + ".text", "empty promise text"})
				}
				obj["text"] = text
			case nil:
				probs = append(probs, cfgProblem{at + ".text", "missing: a promise object needs its text"})
			default:
				probs = append(probs, cfgProblem{at + ".text", "expected a string, got " + cfgDescribe(text)})
			}
			switch cond := p["condition"].(type) {
			case nil:
			case string:
				if !slices.Contains(Conditions, cond) {
					probs = append(probs, cfgProblem{at + ".condition", fmt.Sprintf("unknown condition %q (want one of %s)", cond, strings.Join(Conditions, ", "))})
				}
				obj["condition"] = cond
			default:
				probs = append(probs, cfgProblem{at + ".condition", "expected a string, got " + cfgDescribe(cond)})
			}
			out = append(out, obj)
		default:
			probs = append(probs, cfgProblem{at, "expected a string or {text, condition}, got " + cfgDescribe(item)})
		}
	}
	return out, probs
}

// cfgSplitList reads a comma-separated list; blanks are dropped.
func cfgSplitList(s string) []string {
	out := []string{}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

var cfgRules = map[string]func(v any) []cfgProblem{
	"workflow.stop_hook.max_cycles":     cfgNonNegative,
	"workflow.stop_hook.next_ids":       cfgNonNegative,
	"workflow.no_progress_cycles":       cfgNonNegative,
	"workflow.done_token.max":           cfgNonNegative,
	"workflow.done_token.prefix":        cfgNonEmpty,
	"workflow.stop_hook.allow_exit_on":  cfgEachOneOf(Conditions),
	"workflow.stop_hook.on_beads_error": cfgOneOf(cfgBeadsErrModes),
	"workflow.stop_hook.subagent_stop":  cfgOneOf(cfgSubagentModes),
	"workflow.stuck_after":              cfgNonNegativeDuration,
	"workflow.max_duration":             cfgNonNegativeDuration,
	"beads.bin":                         cfgNonEmpty,
	"beads.timeout":                     cfgPositiveDuration,
	"state.dir":                         cfgNonEmpty,
	"log.level":                         cfgOneOf(cfgLogLevels),
	"workflow.stuck_action":             cfgOneOf(cfgStuckActions),
	"workflow.worktrees.pattern":        cfgNonEmpty,
	"workflow.feedback_limit":           cfgNonNegative,
	"workflow.checks":                   cfgChecks,
	"claim.patterns":                    cfgRegexps,
	"claim.arm_patterns":                cfgRegexps,
	"claim.runs_dir":                    cfgNonEmpty,
	"run.agent":                         cfgOneOf(cfgRunAgents),
	"run.session":                       cfgOneOf(cfgRunSessions),
	"run.claude_bin":                    cfgNonEmpty,
	"run.codex_bin":                     cfgNonEmpty,
	"run.dir":                           cfgNonEmpty,
}

// cfgRegexps checks a list of regular expressions.
func cfgRegexps(v any) []cfgProblem {
	var probs []cfgProblem
	for i, re := range v.([]string) {
		if _, err := regexp.Compile(re); err != nil {
			probs = append(probs, cfgProblem{fmt.Sprintf("[%d]", i), "invalid regular expression: " + err.Error()})
		}
	}
	return probs
}

// cfgChecks checks the shape of workflow.checks: each item a checker name or
// an object with a type; CheckSpecProblems (checks.go) checks the options.
func cfgChecks(v any) []cfgProblem {
	var probs []cfgProblem
	for i, item := range v.([]any) {
		at := fmt.Sprintf("[%d]", i)
		for _, p := range CheckSpecProblems(item) {
			probs = append(probs, cfgProblem{at + p.sub, p.msg})
		}
	}
	return probs
}

func cfgNonNegative(v any) []cfgProblem {
	if n := v.(int); n < 0 {
		return cfgOne("must be 0 or more, got %d", n)
	}
	return nil
}

func cfgNonEmpty(v any) []cfgProblem {
	if strings.TrimSpace(v.(string)) == "" {
		return cfgOne("must not be empty")
	}
	return nil
}

func cfgNonNegativeDuration(v any) []cfgProblem {
	if d := v.(time.Duration); d < 0 {
		return cfgOne("must not be negative, got %s", FormatDuration(d))
	}
	return nil
}

func cfgPositiveDuration(v any) []cfgProblem {
	if d := v.(time.Duration); d <= 0 {
		return cfgOne("must be more than 0, got %s", FormatDuration(d))
	}
	return nil
}

func cfgOneOf(set []string) func(v any) []cfgProblem {
	return func(v any) []cfgProblem {
		if s := v.(string); !slices.Contains(set, s) {
			return cfgOne("must be one of %s, got %q", strings.Join(set, ", "), s)
		}
		return nil
	}
}

func cfgEachOneOf(set []string) func(v any) []cfgProblem {
	return func(v any) []cfgProblem {
		var probs []cfgProblem
		for i, s := range v.([]string) {
			if !slices.Contains(set, s) {
				probs = append(probs, cfgProblem{fmt.Sprintf("[%d]", i), fmt.Sprintf("unknown condition %q (want one of %s)", s, strings.Join(set, ", "))})
			}
		}
		return probs
	}
}

// FormatDuration writes d in Go syntax without zero units: 2h, 1h30m, 10s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func cfgDescribe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("%v", x)
	case int, int64, uint64, float64:
		return fmt.Sprintf("number %v", x)
	case time.Time:
		return "timestamp " + x.Format(time.RFC3339)
	case []any, []string:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// Suggestions for misspelt names.

// cfgSuggestKey proposes a key for an unknown name in a section: the same name
// elsewhere, else a close sibling.
func cfgSuggestKey(section, name string) string {
	var same []string
	lower := strings.ToLower(name)
	for _, key := range cfgAllKeys() {
		if last := key[strings.LastIndex(key, ".")+1:]; last == lower && key != cfgJoinKey(section, name) {
			same = append(same, key)
		}
	}
	if len(same) == 1 {
		return " (did you mean " + same[0] + "?)"
	}
	return cfgSuggestFrom(name, cfgSchema.children[section])
}

func cfgAllKeys() []string {
	out := ConfigKeys()
	for s := range cfgSchema.sections {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func cfgSuggestEnv(name string) string {
	cands := []string{EnvConfig}
	for _, key := range ConfigKeys() {
		cands = append(cands, EnvName(key))
	}
	for alias := range EnvAliases {
		if strings.HasPrefix(alias, cfgEnvPrefix) {
			cands = append(cands, alias)
		}
	}
	for i, c := range cands {
		cands[i] = strings.TrimPrefix(c, cfgEnvPrefix)
	}
	sort.Strings(cands)
	if s := cfgSuggestFrom(strings.TrimPrefix(name, cfgEnvPrefix), cands); s != "" {
		return strings.Replace(s, "mean ", "mean "+cfgEnvPrefix, 1)
	}
	return ""
}

// cfgSuggestFrom gives " (did you mean X?)" for the closest candidate, if it
// is close enough to be an obvious misspelling.
func cfgSuggestFrom(name string, cands []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range cands {
		if d := cfgEditDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > 2 || bestD > (len(name)+1)/3 {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// cfgEditDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and adjacent transpositions.
func cfgEditDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
