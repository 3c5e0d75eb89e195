package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
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
	// ConfigFile is --config; "" = RUNTASKS_CONFIG, else found from StartDir up.
	ConfigFile string
	StartDir   string
	Environ    []string
	// Flags are the command's flags; changed ones override (FlagKeys).
	Flags *pflag.FlagSet
	// MainWorktree gives the main work tree of the repository holding dir,
	// so that every linked worktree is one project; nil: the upward search.
	MainWorktree func(dir string) (root string, ok bool, err error)
	// RequireTrust (the hooks: nobody typed them) leaves out a found
	// project.yaml the store does not trust as it is now, given the bytes
	// Load read (trust.Store.Check; Config.Untrusted); a file named by
	// --config or RUNTASKS_CONFIG is read as named.
	RequireTrust func(root string, content []byte) (trust.State, error)
	// Warn receives problems that do not stop the load (nil drops them).
	Warn func(msg string)
}

// at puts the problems under key (a key, or an item's path).
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
// environment and the changed flags. Each layer is checked on its own
// first, so that a problem names its source; every problem is returned as
// an ErrorList. A value (a list too) replaces the one below it whole.
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
		if cfg.Untrusted = cfgTrust(opts, root, path, data); cfg.Untrusted == nil {
			cfg.File, layers = path, append(layers, cfgFileLayer(path, data))
		}
	}
	layers = append(layers, cfgEnvLayer(opts.Environ, opts.Warn))
	if opts.Flags != nil {
		layers = append(layers, cfgFlagLayer(opts.Flags))
	}
	src, err := cfg.merge(layers)
	if err != nil {
		return nil, nil, err
	}
	return cfg, src, nil
}

// LoadEnv is the configuration at root of the defaults and environ alone
// (doctor's, for a project whose project.yaml does not load).
func LoadEnv(root string, environ []string) (*Config, error) {
	cfg := &Config{Root: root}
	_, err := cfg.merge([]cfgLayer{cfgEnvLayer(environ, nil)})
	return cfg, err
}

// merge merges Defaults() and the layers into c, lowest first, and says
// which layer set each key.
func (c *Config) merge(layers []cfgLayer) (*Sources, error) {
	k, src, def := koanf.New("."), Sources{}, Defaults()
	_ = k.Load(confmap.Provider(cfgMap(&def), "."), nil) // a map loads without error
	for _, key := range cfgKeys {
		src[key] = SourceDefault
	}
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
		return nil, errs
	}
	if errs := cfgDecode(k.Raw(), c, false, nil); errs != nil {
		return nil, errs
	}
	return &src, nil
}

// ValidateYAML checks a project.yaml's content; name is the errors' source.
func ValidateYAML(name string, data []byte) error {
	return cfgErr(cfgFileLayer(name, data).check())
}

// ValidateEnv checks the values of environ's RUNTASKS_* (and TASKMASTER_*)
// variables; unknown ones are not errors (Load warns of them).
func ValidateEnv(environ []string) error {
	return cfgErr(cfgEnvLayer(environ, nil).check())
}

func cfgErr(_ map[string]any, errs ErrorList) error {
	if errs == nil {
		return nil
	}
	return errs
}

// A layer: the values its koanf provider read, nested.
type cfgLayer struct {
	raw    map[string]any
	weak   bool                    // text to convert (environment, flags)
	source func(key string) string // the source of a key's value
	yaml   []byte                  // a file's text, for its problems' lines
	errs   ErrorList               // the provider's own
}

func cfgFileLayer(src string, data []byte) cfgLayer {
	raw, err := yaml.Parser().Unmarshal(data)
	l := cfgLayer{raw: raw, source: func(string) string { return src }, yaml: data}
	if err != nil {
		l.errs = ErrorList{{Source: src, Msg: err.Error()}}
	}
	return l
}

// cfgEnvLayer reads RUNTASKS_* (and the TASKMASTER_ aliases) with koanf's
// env provider. An unknown RUNTASKS_ variable is only a warning: the
// environment is shared with every other program.
func cfgEnvLayer(environ []string, warn func(string)) cfgLayer {
	names, rank := map[string]string{}, map[string]int{}
	p := env.Provider(".", env.Opt{EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, val string) (string, any) {
			key, r := EnvAliases[name], 2
			switch {
			case key != "" && !strings.HasPrefix(name, cfgEnvPrefix):
				r = 1
			case key != "":
			case !strings.HasPrefix(name, cfgEnvPrefix) || slices.Contains(envVars, name) || slices.Contains(NotifyEnvNames, name) || strings.HasPrefix(name, "RUNTASKS_TASK_"):
				return "", nil
			case !slices.Contains(cfgKeys, EnvKey(name)):
				if cands := slices.Concat(envVars, slices.Collect(maps.Keys(EnvAliases))); warn != nil {
					for _, k := range cfgKeys {
						cands = append(cands, EnvName(k))
					}
					warn((&KeyError{Source: "env " + name, Msg: "unknown variable, ignored" + cfgSuggest(name, slices.Sorted(slices.Values(cands)))}).Error())
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

// cfgFlagLayer reads the changed flags FlagKeys names (koanf's posflag).
func cfgFlagLayer(fs *pflag.FlagSet) cfgLayer {
	names := map[string]string{}
	p := posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		key := FlagKeys[f.Name]
		names[key] = f.Name // posflag keeps only the changed flags
		return key, posflag.FlagVal(fs, f)
	})
	raw, _ := p.Read() // never fails
	return cfgLayer{raw: raw, weak: true, source: func(key string) string { return "flag --" + names[key] }}
}

// check decodes the layer alone and checks each value it sets with its
// key's rule. It gives those values by key, and every problem (a file's
// with its line, in the lines' order).
func (l cfgLayer) check() (map[string]any, ErrorList) {
	var cfg Config
	md := &mapstructure.Metadata{}
	probs, vals := cfgDecode(l.raw, &cfg, l.weak, md), map[string]any{}
	m := cfgMap(&cfg)
	for _, key := range cfgKeys {
		path, f := strings.Split(key, "."), cfgField(key)
		if kmaps.Search(l.raw, path) == nil || slices.ContainsFunc(probs, func(p *KeyError) bool { return cfgKeyOf(p.Key) == key }) {
			continue // not set, or not decoded
		}
		if ps := cfgRule(f.Tag.Get("rule"), kmaps.Search(m, path)).at(key); ps != nil {
			probs = append(probs, ps...)
		} else {
			vals[key] = kmaps.Search(m, path)
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

// cfgLines maps each path of a YAML node (workflow.checks[1].run) to its line.
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

// cfgKeys are the keys, as koanf lists those of Defaults() (a list is a key's value).
var cfgKeys = func() []string {
	def, k := Defaults(), koanf.New(".")
	_ = k.Load(confmap.Provider(cfgMap(&def), "."), nil)
	return k.Keys()
}()

// cfgMap is c as nested maps, by its koanf tags (mapstructure encodes it).
func cfgMap(c *Config) (m map[string]any) {
	d, _ := mapstructure.NewDecoder(&mapstructure.DecoderConfig{TagName: "koanf", Result: &m})
	_ = d.Decode(c)
	return m
}

// cfgField is the field of Config at a path (workflow.notify[0].run); its
// Type is nil when there is none.
func cfgField(path string) (f reflect.StructField) {
	f.Type = reflect.TypeFor[Config]()
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' }) {
		if f.Type.Kind() == reflect.Slice {
			f.Type = f.Type.Elem() // part is an index
		} else if i := slices.IndexFunc(reflect.VisibleFields(f.Type), func(sf reflect.StructField) bool { return sf.Tag.Get("koanf") == part }); i >= 0 {
			f = f.Type.Field(i)
		} else {
			return reflect.StructField{}
		}
	}
	return f
}

// cfgKeyOf is the key a problem's path is in: workflow.checks[1].run ->
// workflow.checks (the path itself when it is in no key).
func cfgKeyOf(path string) string {
	for at := path; at != ""; at = cfgParent(at) {
		if slices.Contains(cfgKeys, at) {
			return at
		}
	}
	return path
}

// cfgDecode decodes in into out as koanf unmarshals (mapstructure), with
// cfgHook, and gives the problems at their keys.
func cfgDecode(in, out any, weak bool, md *mapstructure.Metadata) (probs ErrorList) {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{DecodeHook: cfgHook(weak), Metadata: md,
		Result: out, TagName: "koanf", MatchName: func(a, b string) bool { return a == b }})
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
