package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

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

// at puts the problems under key (a key, or a list item's path).
func (l ErrorList) at(key string) ErrorList {
	for _, e := range l {
		e.Key = key + e.Key
	}
	return l
}

func cfgProblem(key, format string, args ...any) ErrorList {
	return ErrorList{{Key: key, Msg: fmt.Sprintf(format, args...)}}
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
	cfg, layers := &Config{Root: root}, []cfgLayer{}
	if path != "" {
		data, err := agentfile.Read(path, agentfile.MaxText)
		if err != nil {
			return nil, nil, fmt.Errorf("read configuration: %w", err)
		}
		if cfg.Untrusted = cfgTrust(opts, root, path, trust.Sum(data)); cfg.Untrusted == nil {
			cfg.File, layers = path, append(layers, cfgFileLayer(path, data))
		}
	}
	layers = append(layers, cfgEnvLayer(opts.Environ, opts.Warn))
	if opts.Flags != nil {
		layers = append(layers, cfgFlagLayer(opts.Flags))
	}
	k, src, def, vals := koanf.New("."), Sources{}, Defaults(), map[string]any{}
	for _, f := range cfgKeys {
		vals[f.key], src[f.key] = f.value(&def), SourceDefault
	}
	_ = k.Load(confmap.Provider(vals, "."), nil) // a map without a parser loads without error
	var errs ErrorList
	for _, l := range layers {
		vals, lerrs := l.check()
		errs = append(errs, lerrs...)
		for key := range vals {
			src[key] = l.source(key)
		}
		_ = k.Load(confmap.Provider(vals, "."), nil)
	}
	if errs != nil {
		return nil, nil, errs
	}
	if err := k.UnmarshalWithConf("", cfg, koanf.UnmarshalConf{DecoderConfig: cfgDecoderConfig(false, nil)}); err != nil {
		return nil, nil, err
	}
	return cfg, &src, nil
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
	return cfgFileLayer(name, data).validate()
}

// ValidateEnv checks the RUNTASKS_* (and TASKMASTER_*) variables of
// environ on their own: each value's type and range. Unknown variables are
// not errors (Load warns of them).
func ValidateEnv(environ []string) error {
	return cfgEnvLayer(environ, nil).validate()
}

// A layer: the values its koanf provider read, nested.
type cfgLayer struct {
	raw    map[string]any
	weak   bool                    // text to convert (environment, flags)
	source func(key string) string // the source of a key's value
	yaml   []byte                  // a file's text, for its problems' lines
	errs   ErrorList               // the provider's own
}

// cfgFileLayer parses a project.yaml with koanf's YAML parser.
func cfgFileLayer(src string, data []byte) cfgLayer {
	raw, err := yaml.Parser().Unmarshal(data)
	l := cfgLayer{raw: raw, source: func(string) string { return src }, yaml: data}
	if err != nil {
		l.errs = ErrorList{{Source: src, Msg: err.Error()}}
	}
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
			case cfgKey(EnvKey(name)) == nil:
				if warn != nil {
					warn((&KeyError{Source: "env " + name, Msg: "unknown variable, ignored" + cfgSuggestEnv(name)}).Error())
				}
				return "", nil
			default:
				key, r = EnvKey(name), 3
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
		if key := FlagKeys[f.Name]; key != "" && f.Changed {
			names[key] = f.Name
		}
		return FlagKeys[f.Name], posflag.FlagVal(fs, f)
	})
	raw, _ := p.Read() // never fails
	return cfgLayer{raw: raw, weak: true, source: func(key string) string { return "flag --" + names[key] }}
}

func (l cfgLayer) validate() error {
	if _, errs := l.check(); errs != nil {
		return errs
	}
	return nil
}

// check decodes the layer alone into a Config (unknown keys are the
// decoder's unused ones) and checks each value it sets with its key's
// rule. It gives those values by key, and every problem (a file's with
// its line, in the order of the lines).
func (l cfgLayer) check() (map[string]any, ErrorList) {
	var cfg Config
	md := &mapstructure.Metadata{}
	probs, vals := cfgDecode(l.raw, &cfg, l.weak, md), map[string]any{}
	for _, f := range cfgKeys {
		if kmaps.Search(l.raw, strings.Split(f.key, ".")) == nil || slices.ContainsFunc(probs, func(p *KeyError) bool { return cfgKeyOf(p.Key) == f.key }) {
			continue // not set, or not decoded
		}
		if v := f.value(&cfg); cfgRule(f.rule, v) != nil {
			probs = append(probs, cfgRule(f.rule, v).at(f.key)...)
		} else {
			vals[f.key] = v
		}
	}
	for _, key := range slices.Sorted(slices.Values(md.Unused)) {
		probs = append(probs, &KeyError{Key: key, Msg: "unknown key" + cfgSuggestKey(key)})
	}
	lines, doc := map[string]int{}, yamlv3.Node{}
	if probs != nil && l.yaml != nil && yamlv3.Unmarshal(l.yaml, &doc) == nil {
		cfgLines(&doc, "", lines)
	}
	for _, p := range probs {
		for at := p.Key; p.Line == 0 && at != ""; at = cfgParent(at) {
			p.Line = lines[at]
		}
		p.Source = l.source(cfgKeyOf(p.Key))
	}
	slices.SortStableFunc(probs, func(a, b *KeyError) int { return a.Line - b.Line })
	return vals, append(l.errs, probs...)
}

// cfgLines maps each path of a YAML node (workflow.checks[1].run) to its
// line.
func cfgLines(n *yamlv3.Node, at string, lines map[string]int) {
	for i, c := range n.Content {
		switch path := fmt.Sprintf("%s[%d]", at, i); n.Kind {
		case yamlv3.DocumentNode:
			cfgLines(c, at, lines)
		case yamlv3.SequenceNode:
			lines[path] = c.Line
			cfgLines(c, path, lines)
		case yamlv3.MappingNode:
			if i%2 == 1 {
				path = strings.TrimPrefix(at+"."+n.Content[i-1].Value, ".")
				lines[path] = n.Content[i-1].Line
				cfgLines(c, path, lines)
			}
		}
	}
}

// cfgParent is the path a path is in: workflow.checks[1].run ->
// workflow.checks[1] -> workflow.checks -> workflow -> "".
func cfgParent(path string) string {
	return path[:max(strings.LastIndexAny(path, ".["), 0)]
}

// The keys: every field of Config that is not a struct (a struct is a
// section), named by the koanf tags on its way, in the struct's order.
type cfgField struct {
	key, rule string
	index     []int
}

func (f *cfgField) value(c *Config) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(f.index).Interface()
}

var cfgKeys, cfgSections = func() (keys []*cfgField, sections []string) {
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f, idx := t.Field(i), append(slices.Clone(index), i)
			switch key := strings.TrimPrefix(prefix+"."+f.Tag.Get("koanf"), "."); {
			case f.Tag.Get("koanf") == "-":
			case f.Type.Kind() == reflect.Struct:
				sections = append(sections, key)
				walk(f.Type, key, idx)
			default:
				keys = append(keys, &cfgField{key, f.Tag.Get("rule"), idx})
			}
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return keys, sections
}()

// cfgKey is the key named key; nil when there is none.
func cfgKey(key string) *cfgField {
	if i := slices.IndexFunc(cfgKeys, func(f *cfgField) bool { return f.key == key }); i >= 0 {
		return cfgKeys[i]
	}
	return nil
}

// cfgKeyOf is the key a problem's path is in: workflow.checks[1].run ->
// workflow.checks (the path itself when it is in no key).
func cfgKeyOf(path string) string {
	for at := path; at != ""; at = cfgParent(at) {
		if cfgKey(at) != nil {
			return at
		}
	}
	return path
}

// Decoding: mapstructure, as koanf unmarshals, with one hook (cfgHook).

func cfgDecoderConfig(weak bool, md *mapstructure.Metadata) *mapstructure.DecoderConfig {
	return &mapstructure.DecoderConfig{DecodeHook: cfgHook(weak), Metadata: md, TagName: "koanf",
		MatchName: func(a, b string) bool { return a == b }}
}

// cfgDecode decodes in into out as Load decodes a layer, and gives the
// problems, each at its key (workflow.stop_hook.allow_exit_on[1]).
func cfgDecode(in, out any, weak bool, md *mapstructure.Metadata) (probs ErrorList) {
	c := cfgDecoderConfig(weak, md)
	c.Result = out
	d, err := mapstructure.NewDecoder(c)
	if err == nil {
		err = d.Decode(in)
	}
	var walk func(at string, err error)
	walk = func(at string, err error) {
		switch e := err.(type) {
		case nil:
		case ErrorList:
			probs = append(probs, e.at(at)...)
		case *mapstructure.DecodeError:
			walk(e.Name(), e.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(at, x)
			}
		case interface{ Unwrap() error }:
			walk(at, e.Unwrap())
		default:
			probs = append(probs, &KeyError{Key: at, Msg: err.Error()})
		}
	}
	walk("", err)
	return probs
}
