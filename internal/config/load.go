package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	kmaps "github.com/knadh/koanf/maps"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/trust"
	"github.com/runtasks/runtasks/internal/usage"
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
	// MainWorktree gives the main work tree of the git repository holding
	// a directory (ok false outside any repository), so that every linked
	// worktree of a repository is one project; nil keeps the upward search.
	MainWorktree func(dir string) (root string, ok bool, err error)
	// RequireTrust, when set, reads a project.yaml found from StartDir only
	// when the store trusts it as it is now (the hooks: nobody typed them).
	// An untrusted or changed file is left out, as if absent, and
	// Config.Untrusted says so. A file named by --config or RUNTASKS_CONFIG
	// was chosen by the user and is read as named.
	RequireTrust TrustChecker
	// Warn receives problems that do not stop the load (an unknown
	// RUNTASKS_ variable); nil drops them.
	Warn func(msg string)
}

// "default", the project.yaml path, "env NAME" or "flag --name".
type Sources map[string]string

const (
	// SourceDefault is the source of a value no layer overrode.
	SourceDefault = "default"
	cfgEnvPrefix  = "RUNTASKS_"
)

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

// EnvVars are the RUNTASKS_ variables runtasks reads that are not
// configuration keys (docs/configuration.md lists them all).
var EnvVars = map[string]string{
	EnvConfig:          "the project.yaml to read",
	"RUNTASKS_SESSION": "the agent session a command acts for (--session); session-hook writes it into CLAUDE_ENV_FILE",
	"RUNTASKS_BIN":     "the runtasks binary the plugin's hook script runs",
}

// KeyError is one configuration problem, in one layer.
type KeyError struct {
	// Source is the layer: the file path, "env NAME", "flag --name" or
	// "default"; Line is the line in the file (0: none).
	Source string `json:"source"`
	Line   int    `json:"line,omitempty"`
	// Key is the key (with a list index or an item's field when that is
	// where the problem is); "" when the problem is not one key's.
	Key string `json:"key,omitempty"`
	Msg string `json:"msg"`
}

func (e *KeyError) Error() string {
	s := e.Source
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		s += ": " + e.Key
	}
	return s + ": " + e.Msg
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

// Load merges with koanf, lowest first, Defaults(), the project.yaml, the
// environment and the changed flags, and unmarshals the result. Each layer
// is decoded and checked on its own first, so that a problem names its
// source; every problem found is returned as an ErrorList. A value replaces
// the one below it whole (a list replaces the list below).
func Load(opts LoadOptions) (*Config, *Sources, error) {
	root, path, err := FindProject(opts)
	if err != nil {
		return nil, nil, err
	}
	var layers []cfgLayer
	var untrusted *UntrustedFile
	if path != "" {
		data, err := agentfile.Read(path, agentfile.MaxText)
		if err != nil {
			return nil, nil, fmt.Errorf("read configuration: %w", err)
		}
		if untrusted = cfgTrust(opts, root, path, trust.Sum(data)); untrusted != nil {
			path = ""
		} else {
			layers = append(layers, cfgFileLayer(path, data))
		}
	}
	layers = append(layers, cfgEnvLayer(opts.Environ, opts.Warn))
	if opts.Flags != nil {
		layers = append(layers, cfgFlagLayer(opts.Flags))
	}

	k, src, def := koanf.New("."), Sources{}, Defaults()
	defaults := map[string]any{}
	for _, f := range cfgSchema.leaves {
		defaults[f.key], src[f.key] = cfgField(&def, f), SourceDefault
	}
	if err := k.Load(confmap.Provider(defaults, "."), nil); err != nil {
		return nil, nil, err
	}
	var errs ErrorList
	for _, l := range layers {
		vals, lerrs := l.check()
		errs = append(errs, lerrs...)
		for key := range vals {
			src[key] = l.source(key)
		}
		if err := k.Load(confmap.Provider(vals, "."), nil); err != nil {
			return nil, nil, err
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	var cfg Config
	if err := k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{DecoderConfig: cfgDecoderConfig(false, nil)}); err != nil {
		return nil, nil, err
	}
	cfg.Root, cfg.File, cfg.Untrusted = root, path, untrusted
	return &cfg, &src, nil
}

// ValidateFile checks one project.yaml on its own: YAML syntax, unknown
// keys, types and values. Problems are returned as an ErrorList.
func ValidateFile(path string) error {
	data, err := agentfile.Read(path, agentfile.MaxText)
	if err != nil {
		return fmt.Errorf("read configuration: %w", err)
	}
	return ValidateYAML(path, data)
}

// ValidateYAML checks a project.yaml's content as ValidateFile does; name
// is the source its errors give.
func ValidateYAML(name string, data []byte) error {
	return cfgValidate(cfgFileLayer(name, data))
}

// ValidateEnv checks the RUNTASKS_* (and TASKMASTER_*) variables of
// environ on their own: each value's type and range. Unknown variables are
// not errors (Load warns of them).
func ValidateEnv(environ []string) error {
	return cfgValidate(cfgEnvLayer(environ, nil))
}

func cfgValidate(l cfgLayer) error {
	if _, errs := l.check(); len(errs) > 0 {
		return ErrorList(errs)
	}
	return nil
}

// A layer: the values its koanf provider read, nested.
type cfgLayer struct {
	raw    map[string]any
	weak   bool                    // text to coerce (environment, flags)
	source func(key string) string // the source of a leaf key's value
	yaml   []byte                  // a file's text, for the lines of its problems
	errs   []*KeyError             // the provider's own
}

// cfgFileLayer parses a project.yaml with koanf's YAML parser.
func cfgFileLayer(src string, data []byte) cfgLayer {
	l := cfgLayer{source: func(string) string { return src }, yaml: data}
	raw, err := yaml.Parser().Unmarshal(data)
	if err != nil {
		l.errs = []*KeyError{{Source: src, Msg: err.Error()}}
	}
	l.raw = raw
	return l
}

// cfgEnvLayer reads RUNTASKS_* (and the TASKMASTER_ aliases) with koanf's
// env provider, each name resolved to its key. An unknown RUNTASKS_
// variable is a warning, not an error: the environment is shared with
// every other program.
func cfgEnvLayer(environ []string, warn func(string)) cfgLayer {
	names, rank := map[string]string{}, map[string]int{}
	p := env.Provider(".", env.Opt{EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, val string) (string, any) {
			key, r := EnvAliases[name], 2
			switch {
			case key != "" && !strings.HasPrefix(name, cfgEnvPrefix):
				r = 1
			case key != "":
			case !strings.HasPrefix(name, cfgEnvPrefix) || EnvVars[name] != "" || slices.Contains(NotifyEnvNames, name):
				return "", nil
			default:
				if key, r = EnvKey(name), 3; cfgSchema.byKey[key] == nil {
					if warn != nil {
						warn((&KeyError{Source: "env " + name, Msg: "unknown variable, ignored" + cfgSuggestEnv(name)}).Error())
					}
					return "", nil
				}
			}
			if r < rank[key] {
				return "", nil
			}
			rank[key], names[key] = r, name
			return key, val
		}})
	raw, _ := p.Read() // never fails
	return cfgLayer{raw: raw, weak: true, source: func(key string) string { return "env " + names[key] }}
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

// cfgFlagLayer reads the changed flags that FlagKeys names with koanf's
// posflag provider.
func cfgFlagLayer(fs *pflag.FlagSet) cfgLayer {
	names := map[string]string{}
	p := posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		key := FlagKeys[f.Name]
		if key != "" && f.Changed {
			names[key] = f.Name
		}
		return key, posflag.FlagVal(fs, f)
	})
	raw, _ := p.Read() // never fails
	return cfgLayer{raw: raw, weak: true, source: func(key string) string { return "flag --" + names[key] }}
}

// check decodes the layer alone into a Config and checks each value it
// sets with its key's rule: it gives those values by key, and every
// problem (a file's with its line).
func (l cfgLayer) check() (map[string]any, []*KeyError) {
	kmaps.IntfaceKeysToStrings(l.raw)
	var cfg Config
	md := &mapstructure.Metadata{}
	probs := cfgFlatten(cfgDecode(l.raw, &cfg, l.weak, md))
	var unknown []cfgProblem
	for _, key := range slices.Sorted(slices.Values(md.Unused)) {
		unknown = append(unknown, cfgProblem{key, "unknown key" + cfgSuggestKey(key)})
	}
	probs = append(unknown, probs...)
	vals := map[string]any{}
	for _, f := range cfgSchema.leaves {
		if kmaps.Search(l.raw, strings.Split(f.key, ".")) == nil || slices.ContainsFunc(probs, func(p cfgProblem) bool { return cfgLeaf(p.sub) == f.key }) {
			continue
		}
		v := cfgField(&cfg, f)
		if ps := cfgRule(f.rule, v); len(ps) > 0 {
			probs = append(probs, ps.at(f.key)...)
			continue
		}
		vals[f.key] = v
	}
	errs, lines := l.errs, map[string]int{}
	var doc yamlv3.Node
	if len(probs) > 0 && l.yaml != nil && yamlv3.Unmarshal(l.yaml, &doc) == nil {
		cfgLines(&doc, "", lines)
	}
	for _, p := range probs {
		line := 0
		for at := p.sub; line == 0 && at != ""; at = at[:max(strings.LastIndexAny(at, ".["), 0)] {
			line = lines[at]
		}
		errs = append(errs, &KeyError{Source: l.source(cfgLeaf(p.sub)), Line: line, Key: p.sub, Msg: p.msg})
	}
	return vals, errs
}

// cfgLeaf is the key a problem's path is in: workflow.checks[1].run ->
// workflow.checks (the path itself when it is in no key).
func cfgLeaf(path string) string {
	for key := path; key != ""; key = key[:max(strings.LastIndexAny(key, ".["), 0)] {
		if cfgSchema.byKey[key] != nil {
			return key
		}
	}
	return path
}

// cfgLines maps each path of a YAML node (workflow.checks[1].run) to its
// line.
func cfgLines(n *yamlv3.Node, at string, lines map[string]int) map[string]int {
	for i, c := range n.Content {
		switch n.Kind {
		case yamlv3.DocumentNode:
			cfgLines(c, at, lines)
		case yamlv3.SequenceNode:
			lines[fmt.Sprintf("%s[%d]", at, i)] = c.Line
			cfgLines(c, fmt.Sprintf("%s[%d]", at, i), lines)
		case yamlv3.MappingNode:
			if i%2 == 1 {
				key := cfgJoinKey(at, n.Content[i-1].Value)
				lines[key] = n.Content[i-1].Line
				cfgLines(c, key, lines)
			}
		}
	}
	return lines
}

// The schema: every key and section, from Config's koanf tags. A struct is
// a section; anything else (a list of promises or checks too) is a key.
type cfgFieldInfo struct {
	key, rule string
	index     []int
}

var cfgSchema = func() (s struct {
	leaves   []*cfgFieldInfo
	byKey    map[string]*cfgFieldInfo
	sections map[string]bool
	names    []string // keys and sections, in the order of the struct
}) {
	s.byKey, s.sections = map[string]*cfgFieldInfo{}, map[string]bool{}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for _, f := range reflect.VisibleFields(t) {
			name := f.Tag.Get("koanf")
			if name == "" || name == "-" || len(f.Index) > 1 {
				continue
			}
			key, idx := cfgJoinKey(prefix, name), append(slices.Clone(index), f.Index...)
			s.names = append(s.names, key)
			if f.Type.Kind() == reflect.Struct {
				s.sections[key] = true
				walk(f.Type, key, idx)
				continue
			}
			s.leaves = append(s.leaves, &cfgFieldInfo{key, f.Tag.Get("rule"), idx})
			s.byKey[key] = s.leaves[len(s.leaves)-1]
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return s
}()

func cfgJoinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// cfgField is a key's value in c.
func cfgField(c *Config, f *cfgFieldInfo) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(f.index).Interface()
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
	if f := cfgSchema.byKey[key]; f != nil {
		return cfgField(c, f), true
	}
	return nil, false
}

// Decoding: mapstructure, as koanf unmarshals, with one hook for the
// configuration's types; text is coerced in weak layers only.

var (
	cfgDurationType  = reflect.TypeFor[time.Duration]()
	cfgPromiseType   = reflect.TypeFor[Promise]()
	cfgCheckSpecType = reflect.TypeFor[CheckSpec]()
)

func cfgDecoderConfig(weak bool, md *mapstructure.Metadata) *mapstructure.DecoderConfig {
	return &mapstructure.DecoderConfig{DecodeHook: cfgHook(weak), WeaklyTypedInput: weak, Metadata: md,
		TagName: "koanf", MatchName: func(a, b string) bool { return a == b }}
}

// cfgDecode decodes in into out as Load decodes a layer.
func cfgDecode(in, out any, weak bool, md *mapstructure.Metadata) error {
	c := cfgDecoderConfig(weak, md)
	c.Result = out
	d, err := mapstructure.NewDecoder(c)
	if err != nil {
		return err
	}
	return d.Decode(in)
}

func cfgHook(weak bool) mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		text, isText := data.(string)
		switch {
		case from == to:
			return data, nil // a typed value: the defaults, a checked layer's
		case to == cfgDurationType:
			if d, err := time.ParseDuration(strings.TrimSpace(text)); isText && err == nil {
				return d, nil
			}
			if n := reflect.ValueOf(data); n.CanInt() || n.CanUint() || n.CanFloat() {
				if n.IsZero() {
					return time.Duration(0), nil
				}
				return nil, errors.New(`expected a duration with a unit such as "90s" or "2h", got ` + cfgDescribe(data))
			}
		case to.Kind() == reflect.Int:
			return cfgInt(data, weak)
		case to.Kind() == reflect.Bool && isText && weak:
			if b, err := strconv.ParseBool(strings.TrimSpace(text)); err == nil {
				return b, nil
			}
		case to.Kind() == reflect.Slice && from.Kind() != reflect.Slice:
			if isText && weak {
				out := []string{}
				for _, item := range strings.Split(text, ",") {
					if item = strings.TrimSpace(item); item != "" {
						out = append(out, item)
					}
				}
				return out, nil
			}
		case to == cfgPromiseType:
			return cfgPromise(data)
		case to == cfgCheckSpecType:
			return cfgCheckSpec(data)
		case to.Kind() == reflect.Struct:
			if _, ok := data.(map[string]any); ok {
				return data, nil
			}
		default:
			return data, nil
		}
		return nil, cfgTypeError(to, data)
	}
}

// cfgInt: whole numbers that fit; text only in a weak layer.
func cfgInt(data any, weak bool) (any, error) {
	text := fmt.Sprint(data)
	switch x := data.(type) {
	case float64:
		text = strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		if text = ""; weak {
			text = strings.TrimSpace(x)
		}
	}
	i, err := strconv.Atoi(text)
	switch {
	case err == nil:
		return i, nil
	case errors.Is(err, strconv.ErrRange):
		return nil, fmt.Errorf("out of range, got %s", cfgDescribe(data))
	}
	return nil, cfgTypeError(reflect.TypeFor[int](), data)
}

// cfgPromise: a completion promise is its text, or {text, condition}.
func cfgPromise(data any) (any, error) {
	switch v := data.(type) {
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, cfgProblems{{"", "empty promise text"}}
		}
		return Promise{Text: v}, nil
	case map[string]any:
		var probs cfgProblems
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if k != "text" && k != "condition" {
				probs = append(probs, cfgProblem{"." + k, "unknown key" + cfgSuggestFrom(k, []string{"text", "condition"}) + " (a promise has text and condition)"})
			}
		}
		switch text, ok := v["text"].(string); {
		case v["text"] == nil:
			probs = append(probs, cfgProblem{".text", "missing: a promise object needs its text"})
		case ok && strings.TrimSpace(text) == "":
			probs = append(probs, cfgProblem{".text", "empty promise text"})
		}
		if cond, ok := v["condition"].(string); ok {
			probs = append(probs, cfgCondition(cond).at(".condition")...)
		}
		if len(probs) > 0 {
			return nil, probs
		}
		return v, nil
	}
	return nil, cfgTypeError(cfgPromiseType, data)
}

// Problems: what is wrong, where (sub: a key, or "[2].text" under one).

type cfgProblem struct{ sub, msg string }

type cfgProblems []cfgProblem

func (ps cfgProblems) Error() string { return fmt.Sprint([]cfgProblem(ps)) }

// at puts the problems under sub.
func (ps cfgProblems) at(sub string) cfgProblems {
	out := make(cfgProblems, len(ps))
	for i, p := range ps {
		out[i] = cfgProblem{sub + p.sub, p.msg}
	}
	return out
}

func cfgTypeError(to reflect.Type, data any) error {
	return &mapstructure.UnconvertibleTypeError{Expected: reflect.New(to).Elem(), Value: data}
}

// cfgFlatten turns a decoder's error into problems, each at its key
// (workflow.stop_hook.allow_exit_on[1]), worded for people.
func cfgFlatten(err error) cfgProblems {
	var out cfgProblems
	var walk func(at string, err error)
	walk = func(at string, err error) {
		switch e := err.(type) {
		case nil:
		case cfgProblems:
			out = append(out, e.at(at)...)
		case *mapstructure.DecodeError:
			walk(e.Name(), e.Unwrap())
		case *mapstructure.UnconvertibleTypeError:
			out = append(out, cfgProblem{at, cfgTypeMsg(e.Expected.Type(), e.Value)})
		case *mapstructure.ParseError:
			out = append(out, cfgProblem{at, cfgTypeMsg(e.Expected.Type(), e.Value)})
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(at, x)
			}
		default:
			if inner := errors.Unwrap(err); inner != nil {
				walk(at, inner)
			} else {
				out = append(out, cfgProblem{at, err.Error()})
			}
		}
	}
	walk("", err)
	return out
}

func cfgTypeMsg(want reflect.Type, got any) string {
	var w string
	switch t := want; {
	case t == cfgDurationType:
		w = `a duration such as "90s" or "2h"`
	case t == cfgPromiseType:
		w = "a string or {text, condition}"
	case t == cfgCheckSpecType:
		w = "a checker name or {type, …}"
	case t.Kind() == reflect.Slice && t.Elem() == cfgPromiseType:
		w = "a list of promises"
	case t.Kind() == reflect.Slice && t.Elem() == cfgCheckSpecType:
		w = "a list of checks"
	default:
		w = map[reflect.Kind]string{reflect.Slice: "a list", reflect.Bool: "true or false", reflect.Int: "an integer",
			reflect.String: "a string", reflect.Float64: "a number", reflect.Struct: "a mapping of keys"}[t.Kind()]
	}
	msg := "expected " + w + ", got " + cfgDescribe(got)
	switch got.(type) {
	case int, int64, uint64, float64, bool, time.Time:
		if want.Kind() == reflect.String {
			msg += " (quote it to make it a string)"
		}
	}
	return msg
}

func cfgDescribe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprint(x)
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

// Rules: a key's value is checked with its rule tag (see Config); a list
// of checks, notify commands or prices item by item.
func cfgRule(tag string, v any) (probs cfgProblems) {
	switch x := v.(type) {
	case []CheckSpec:
		for i, s := range x {
			probs = append(probs, s.problems().at(fmt.Sprintf("[%d]", i))...)
		}
		return probs
	case []Notify:
		return cfgNotifyRule(x)
	case []usage.Price:
		return cfgPricesRule(x)
	}
	lo, hi, isRange := strings.Cut(tag, "..")
	switch {
	case tag == "nonempty" && strings.TrimSpace(v.(string)) == "":
		return cfgOne("must not be empty")
	case tag == "regexps":
		for i, re := range v.([]string) {
			if _, err := regexp.Compile(re); err != nil {
				probs = append(probs, cfgProblem{fmt.Sprintf("[%d]", i), "invalid regular expression: " + err.Error()})
			}
		}
	case tag == "conditions":
		for i, c := range v.([]string) {
			probs = append(probs, cfgCondition(c).at(fmt.Sprintf("[%d]", i))...)
		}
	case strings.Contains(tag, "|") && !slices.Contains(strings.Split(tag, "|"), v.(string)):
		return cfgOne("must be one of %s, got %q", strings.ReplaceAll(tag, "|", ", "), v)
	case isRange:
		n, got := cfgNumber(v), fmt.Sprint(v)
		d, isDur := v.(time.Duration)
		if isDur {
			got = FormatDuration(d)
		}
		switch {
		case strings.HasPrefix(lo, ">") && n <= 0:
			return cfgOne("must be more than 0, got %s", got)
		case n < cfgNumber(lo) && isDur:
			return cfgOne("must not be negative, got %s", got)
		case n < cfgNumber(lo):
			return cfgOne("must be %s or more, got %s", lo, got)
		case n > cfgNumber(hi):
			return cfgOne("must be at most %s, got %s", hi, got)
		}
	}
	return probs
}

// cfgNumber is a number, a duration or a range's end as a float.
func cfgNumber(v any) float64 {
	switch x := v.(type) {
	case time.Duration:
		return float64(x)
	case int:
		return float64(x)
	case float64:
		return x
	}
	s := strings.TrimPrefix(v.(string), ">")
	if d, err := time.ParseDuration(s); err == nil {
		return float64(d)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func cfgCondition(cond string) cfgProblems {
	if slices.Contains(Conditions, cond) {
		return nil
	}
	return cfgOne("unknown condition %q (want one of %s)", cond, strings.Join(Conditions, ", "))
}

func cfgOne(format string, args ...any) cfgProblems {
	return cfgProblems{{"", fmt.Sprintf(format, args...)}}
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

// Suggestions for misspelt names.

// cfgSuggestKey proposes a key for an unknown one: the same name in
// another section, else a close sibling.
func cfgSuggestKey(key string) string {
	i := strings.LastIndex(key, ".")
	section, name := key[:max(i, 0)], key[i+1:]
	var same, siblings []string
	for _, k := range cfgSchema.names {
		j := strings.LastIndex(k, ".")
		if k[j+1:] == strings.ToLower(name) {
			same = append(same, k)
		}
		if k[:max(j, 0)] == section {
			siblings = append(siblings, k[j+1:])
		}
	}
	if len(same) == 1 {
		return " (did you mean " + same[0] + "?)"
	}
	return cfgSuggestFrom(name, siblings)
}

func cfgSuggestEnv(name string) string {
	cands := slices.Collect(maps.Keys(EnvVars))
	for _, key := range ConfigKeys() {
		cands = append(cands, EnvName(key))
	}
	for alias := range EnvAliases {
		cands = append(cands, alias)
	}
	for i, c := range cands {
		cands[i] = strings.TrimPrefix(c, cfgEnvPrefix)
	}
	slices.Sort(cands)
	return strings.Replace(cfgSuggestFrom(strings.TrimPrefix(name, cfgEnvPrefix), cands), "mean ", "mean "+cfgEnvPrefix, 1)
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
