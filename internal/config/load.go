package config

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	"sync"
	"time"

	"github.com/go-viper/mapstructure/v2"
	kmaps "github.com/knadh/koanf/maps"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/spf13/pflag"

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
	// Cache, when set, keeps the decoded values of the project.yaml read
	// (see ConfigCache); nil parses it at every Load.
	Cache *ConfigCache
	// DecodeFile decodes a project.yaml's content for a build that links
	// no YAML parser (runtasks-hook, whose start-up it would slow at
	// every stop): it returns what DecodeFileEntry returns for it, from a
	// build that has one. Used only when the cache has no entry.
	DecodeFile func(src string, data []byte) ([]byte, error)
}

// TrustChecker says whether a project's project.yaml is trusted as it is:
// root is the project root, sum the trust.Sum of the file's bytes as Load
// read them (computed once: the configuration cache's key uses it too).
type TrustChecker interface {
	CheckSum(root, sum string) (trust.State, error)
}

// UntrustedFile is a project.yaml Load left out for want of trust.
type UntrustedFile struct {
	// Root is the project root; Path the project.yaml.
	Root, Path string
	// State is trust.Untrusted or trust.Changed.
	State trust.State
	// Err is a trust store that could not be read ("" = none).
	Err string
}

// Message is the sentence the hooks show the person: which file was left
// out, why, and the command that trusts it.
func (u *UntrustedFile) Message() string {
	why := "is not trusted"
	if u.State == trust.Changed {
		why = "changed since it was trusted"
	}
	if u.Err != "" {
		why += " (" + u.Err + ")"
	}
	return fmt.Sprintf("%s %s, so the hooks ignore it (defaults, environment and flags only). Review it, then run `runtasks trust %s`.",
		u.Path, why, ShellQuote(u.Root))
}

// ShellQuote quotes s for a POSIX shell when it needs quoting.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

//go:embed defaults.yaml
var cfgDefaultsYAML []byte

// KeyError is one configuration problem, in one layer.
type KeyError struct {
	// Source is the layer: the file path, "env NAME", "flag --name" or
	// "default".
	Source string `json:"source"`
	// Key is the key (with a list index or promise field when that is where
	// the problem is); "" when the problem is not one key's.
	Key string `json:"key,omitempty"`
	Msg string `json:"msg"`
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
// the environment and the changed flags. Each layer is decoded and checked
// on its own, so that an error names its source; every problem found is
// returned as an ErrorList. workflow.checks are checked, not built (see
// engine.Checkers).
func Load(opts LoadOptions) (*Config, *Sources, error) {
	root, path, untrusted, layers, err := cfgUpperLayers(opts)
	if err != nil {
		return nil, nil, err
	}
	// Every value is a leaf key of the schema, and a layer's value for a
	// key replaces the one below it whole (a list replaces the list below).
	// The defaults are a Config already (defaults_gen.go, kept equal to
	// defaults.yaml by a test): a stop decodes, over them, only the values
	// the layers above set, each once, and checks each as it goes.
	cfg := cfgDefaultConfig()
	src := maps.Clone(cfgDefaultSources)
	var errs ErrorList
	for i, l := range layers {
		if l.cached != nil {
			if l.applyCached(&cfg) == nil {
				maps.Copy(src, l.srcs)
				continue
			}
			// A cache entry that no longer decodes: the file (the first
			// layer over the defaults) is parsed.
			cfg = cfgDefaultConfig()
			l = cfgFileLayer(path, l.cacheData)
			l.cacheData, l.cacheSum = layers[i].cacheData, layers[i].cacheSum
			layers[i] = l
		}
		errs = append(errs, l.errs...)
		layerErrs := l.decodeInto(&cfg)
		errs = append(errs, layerErrs...)
		for key := range l.vals {
			src[key] = l.srcs[key]
		}
		if l.cacheData != nil && len(l.errs) == 0 && len(layerErrs) == 0 {
			opts.Cache.write(l.cacheSum, l, &cfg)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	cfg.Root, cfg.File, cfg.Untrusted = root, path, untrusted
	return &cfg, &src, nil
}

// cfgDefaultSources names the defaults as the source of every key.
var cfgDefaultSources = func() Sources {
	src := make(Sources, len(cfgSchema.leaves))
	for _, f := range cfgSchema.leaves {
		src[f.key] = SourceDefault
	}
	return src
}()

// cfgUpperLayers finds the project and reads the layers above the
// defaults, lowest first: the project.yaml (when there is one and it may
// be read), the environment and the changed flags.
func cfgUpperLayers(opts LoadOptions) (root, path string, untrusted *UntrustedFile, layers []cfgLayer, err error) {
	if root, path, err = FindProject(opts); err != nil {
		return "", "", nil, nil, err
	}
	if path != "" {
		data, err := agentfile.Read(path, agentfile.MaxText)
		if err != nil {
			return "", "", nil, nil, fmt.Errorf("read configuration: %w", err)
		}
		sum := trust.Sum(data)
		if untrusted = cfgTrust(opts, root, path, sum); untrusted == nil {
			l, ok := opts.Cache.read(path, sum)
			switch {
			case ok:
			case cfgParseYAML == nil:
				l = cfgDecodedElsewhere(opts, path, data, sum)
			default:
				l = cfgFileLayer(path, data)
			}
			l.cacheData, l.cacheSum = data, sum
			layers = append(layers, l)
		} else {
			path = ""
		}
	}
	envLayer := cfgEnvLayer(opts.Environ)
	if opts.Warn != nil {
		for _, w := range envLayer.warnings {
			opts.Warn(w)
		}
	}
	layers = append(layers, envLayer)
	if opts.Flags != nil {
		l, err := cfgFlagLayer(opts.Flags)
		if err != nil {
			return "", "", nil, nil, err
		}
		layers = append(layers, l)
	}
	return root, path, untrusted, layers, nil
}

// cfgTrust is nil when the project.yaml at path may be read: no trust is
// required, or the file was named explicitly, or the store trusts it as it
// is; else what was left out and why.
func cfgTrust(opts LoadOptions, root, path, sum string) *UntrustedFile {
	if opts.RequireTrust == nil || opts.ConfigFile != "" || cfgLookupEnv(opts.Environ, EnvConfig) != "" {
		return nil
	}
	st, err := opts.RequireTrust.CheckSum(root, sum)
	if err == nil && st == trust.Trusted {
		return nil
	}
	u := &UntrustedFile{Root: root, Path: path, State: st}
	if err != nil {
		u.Err = err.Error()
	}
	return u
}

// ValidateFile checks one project.yaml on its own: YAML syntax, unknown
// keys, types and values (each number within its range). Problems are
// returned as an ErrorList.
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
	l := cfgFileLayer(name, data)
	if errs := append(l.errs, l.check()...); len(errs) > 0 {
		return ErrorList(errs)
	}
	return nil
}

// EnvProjectDir is the variable Claude Code sets, in its hooks'
// environment, to the directory the session was started in.
const EnvProjectDir = "CLAUDE_PROJECT_DIR"

// FindProject finds the project root and the project.yaml that Load reads
// ("" when there is none). StartDir ("" = the working directory) must be a
// directory: a hook whose cwd is gone gets an error, never another
// project.
//
//   - An explicit file (ConfigFile, else RUNTASKS_CONFIG) must exist;
//     relative, it is taken from StartDir; the root is its directory.
//   - Otherwise the search starts from CLAUDE_PROJECT_DIR when the
//     environment sets it to a directory, else from StartDir.
//   - Inside a git repository (MainWorktree) the root is the repository's
//     main work tree: every linked worktree (git worktree add) shares the
//     root's project.yaml, state, bindings, trust and run folders.
//   - Outside any repository, the root is CLAUDE_PROJECT_DIR when set, else
//     the first directory from StartDir upwards that holds project.yaml,
//     .beads or .git; when none does, the root is StartDir.
//
// The root's project.yaml is read when present.
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
	if err := cfgDir(start); err != nil {
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

	fixed := false // the root is the start itself when no repository holds it
	if d := cfgLookupEnv(opts.Environ, EnvProjectDir); filepath.IsAbs(d) && cfgDir(d) == nil {
		start, fixed = filepath.Clean(d), true
	}
	if opts.MainWorktree != nil {
		if main, ok, err := opts.MainWorktree(start); err != nil {
			return "", "", fmt.Errorf("find project: %w", err)
		} else if ok {
			return cfgProjectAt(main)
		}
	}
	if fixed {
		return cfgProjectAt(start)
	}
	for dir := start; ; {
		candidate := filepath.Join(dir, ProjectFile)
		if _, err := os.Stat(candidate); err == nil {
			return cfgProjectAt(dir)
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

// cfgProjectAt is the project rooted at dir, with its project.yaml if it
// has one (which must then be a regular file).
func cfgProjectAt(dir string) (root, path string, err error) {
	candidate := filepath.Join(dir, ProjectFile)
	if _, err := os.Lstat(candidate); err != nil {
		return dir, "", nil
	}
	if err := cfgRegularFile(candidate); err != nil {
		return "", "", fmt.Errorf("configuration file: %w", err)
	}
	return dir, candidate, nil
}

// cfgDir checks that dir exists and is a directory.
func cfgDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("directory %s does not exist", dir)
		}
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
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
	for _, p := range c.Workflow.StopHook.CompletionPromises {
		if p.Text = strings.TrimSpace(p.Text); p.Text == "" {
			continue
		}
		if p.Condition == "" {
			p.Condition = CondAllComplete
			for known, cond := range cfgKnownPromises {
				if strings.EqualFold(p.Text, known) {
					p.Condition = cond
				}
			}
		}
		out = append(out, p)
	}
	return out
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

// The schema: every key, derived from Config's koanf tags. A struct is a
// section; anything else (a list of promises or checks too) is a key.
// defaults_gen.go holds it as a table (cfgSchemaKeys, generated and
// checked against Config by TestDefaultsGenerated), so that no process
// walks the struct by reflection at start.

type cfgField struct {
	key   string
	index []int
	// section: a struct of keys, not a key.
	section bool
}

type cfgSchemaInfo struct {
	leaves   []*cfgField
	byKey    map[string]*cfgField
	sections map[string]bool
}

var cfgSchema = newSchema(cfgSchemaKeys[:])

// newSchema indexes the keys and sections of a schema table.
func newSchema(keys []cfgField) *cfgSchemaInfo {
	s := &cfgSchemaInfo{byKey: make(map[string]*cfgField, len(keys)), sections: map[string]bool{}}
	for i := range keys {
		f := &keys[i]
		if f.section {
			s.sections[f.key] = true
			continue
		}
		s.leaves = append(s.leaves, f)
		s.byKey[f.key] = f
	}
	return s
}

// children are the last parts of a section's keys and sections ("" = the
// top), in the order of the struct (only misspellings need them).
func (s *cfgSchemaInfo) children(section string) []string {
	var out []string
	for _, f := range cfgSchemaKeys {
		parent, name := "", f.key
		if i := strings.LastIndex(f.key, "."); i >= 0 {
			parent, name = f.key[:i], f.key[i+1:]
		}
		if parent == section {
			out = append(out, name)
		}
	}
	return out
}

var (
	cfgDurationType  = reflect.TypeFor[time.Duration]()
	cfgPromiseType   = reflect.TypeFor[Promise]()
	cfgCheckSpecType = reflect.TypeFor[CheckSpec]()
)

func cfgJoinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Layers: each is its known keys' raw values, with a source for each.

type cfgLayer struct {
	vals map[string]any    // key -> the value as the layer gives it
	srcs map[string]string // key -> its source
	// weak layers (environment, flags) give text for koanf to coerce; a
	// file's YAML types must match.
	weak bool
	errs []*KeyError // unknown keys, a value that is not a mapping…
	// warnings are problems that do not stop the load (an unknown
	// RUNTASKS_ variable in the environment).
	warnings []string
	// cached are a file layer's values from the ConfigCache (vals is then
	// empty); cacheData is a file layer's content, cached once the parsed
	// layer loaded without a problem.
	cached    map[string]json.RawMessage
	cacheData []byte
	cacheSum  string // trust.Sum(cacheData)
}

func (l *cfgLayer) set(key, src string, v any) {
	l.vals[key], l.srcs[key] = v, src
}

func newCfgLayer(weak bool) cfgLayer {
	return cfgLayer{vals: map[string]any{}, srcs: map[string]string{}, weak: weak}
}

// cfgFileLayer parses a YAML layer and sorts its keys from unknown ones.
func cfgFileLayer(src string, data []byte) cfgLayer {
	l := newCfgLayer(false)
	if cfgParseYAML == nil {
		l.errs = []*KeyError{{Source: src, Msg: "this build of runtasks reads no YAML (runtasks reads it for it)"}}
		return l
	}
	mp, err := cfgParseYAML(data)
	if err != nil {
		l.errs = []*KeyError{{Source: src, Msg: err.Error()}}
		return l
	}
	kmaps.IntfaceKeysToStrings(mp)
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
					l.errs = append(l.errs, &KeyError{Source: src, Key: key, Msg: "expected a mapping of keys, got " + cfgDescribe(v)})
				}
			case cfgSchema.byKey[key] != nil:
				if v != nil { // no value: the layer below stands
					l.set(key, src, v)
				}
			default:
				l.errs = append(l.errs, &KeyError{Source: src, Key: key, Msg: "unknown key" + cfgSuggestKey(prefix, name)})
			}
		}
	}
	walk(mp, "")
	return l
}

// EnvVars are the RUNTASKS_ variables runtasks reads that are not
// configuration keys, with what each does (docs/configuration.md lists
// them all).
var EnvVars = map[string]string{
	EnvConfig:          "the project.yaml to read",
	"RUNTASKS_SESSION": "the agent session a command acts for (--session); session-hook writes it into CLAUDE_ENV_FILE",
	"RUNTASKS_BIN":     "the runtasks binary the plugin's hook script runs",
}

// cfgEnvLayer reads RUNTASKS_* (and the TASKMASTER_ knobs) from environ. An
// unknown RUNTASKS_ variable is a warning, not an error: the environment is
// shared with every other program (a typo in a file stays an error).
func cfgEnvLayer(environ []string) cfgLayer {
	l := newCfgLayer(true)
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
		l.errs = []*KeyError{{Source: "env", Msg: err.Error()}}
		return l
	}
	rank := map[string]int{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		key, r := EnvAliases[name], 1
		switch {
		case key != "" && strings.HasPrefix(name, cfgEnvPrefix):
			r = 2
		case key != "":
		case EnvVars[name] != "", slices.Contains(NotifyEnvNames, name):
			continue
		default:
			key, r = EnvKey(name), 3
			if cfgSchema.byKey[key] == nil {
				l.warnings = append(l.warnings, (&KeyError{Source: "env " + name, Msg: "unknown variable, ignored" + cfgSuggestEnv(name)}).Error())
				continue
			}
		}
		if r > rank[key] {
			rank[key] = r
			l.set(key, "env "+name, raw[name])
		}
	}
	return l
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

// cfgFlagLayer reads the changed flags that FlagKeys names, through koanf's
// posflag provider.
func cfgFlagLayer(fs *pflag.FlagSet) (cfgLayer, error) {
	l := newCfgLayer(true)
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
		return l, fmt.Errorf("read flags: %w", err)
	}
	flat, _ := kmaps.Flatten(mp, nil, ".")
	for key, v := range flat {
		l.set(key, "flag --"+names[key], v)
	}
	return l, nil
}

// Decoding: koanf's unmarshal (mapstructure), weakly typed for text layers,
// with hooks for lists, durations, integers, promises and checks.

// check decodes the layer alone and checks each value it sets; every
// problem names the source of its key.
func (l cfgLayer) check() []*KeyError {
	var cfg Config
	return l.decodeInto(&cfg)
}

// decodeInto decodes each value the layer sets into its field of cfg and
// checks it with the key's rule; every problem names the source of its
// key, in the order of the schema. A field is zeroed before its value is
// decoded into it, so that the value replaces the one below whole (the
// decoder fills a list in place and merges a mapping), and each value is
// decoded on its own, as the leaf it is (a struct's other fields cost
// nothing).
func (l cfgLayer) decodeInto(cfg *Config) []*KeyError {
	if len(l.vals) == 0 {
		return nil
	}
	into := reflect.ValueOf(cfg).Elem()
	var errs []*KeyError
	for _, f := range cfgSchema.leaves {
		v, ok := l.vals[f.key]
		if !ok {
			continue
		}
		field := into.FieldByIndex(f.index)
		var probs []cfgProblem
		if s, ok := v.(string); ok && field.Kind() == reflect.String {
			// Text for a text key: every hook passes it on and the decoder
			// sets it as it is, so it is set here, sparing a stop the
			// decoder's first run (most of a cold Load's time).
			field.SetString(s)
		} else {
			field.SetZero()
			probs = cfgFlatten(cfgDecode(v, field.Addr().Interface(), l.weak))
		}
		if rule := cfgRules[f.key]; rule != nil && len(probs) == 0 {
			probs = rule.check(field.Interface())
		}
		for _, p := range probs {
			errs = append(errs, &KeyError{Source: l.srcs[f.key], Key: f.key + p.sub, Msg: p.msg})
		}
	}
	return errs
}

// cfgHooks are the decoder's hooks, strict [0] and weak [1], composed once
// (they keep no state between calls), at the first decode: a hook that
// decodes nothing does not compose them. A sync.Once filled at the call,
// not a sync.OnceValue variable: the check hook decodes a check's options
// with cfgDecode, and a variable whose initializer reaches cfgDecode is an
// initialization cycle.
var (
	cfgHooksOnce sync.Once
	cfgHooks     [2]mapstructure.DecodeHookFunc
)

// cfgDecodeHooks are the decoder's hooks, weak or strict.
func cfgDecodeHooks(weak bool) mapstructure.DecodeHookFunc {
	cfgHooksOnce.Do(func() {
		cfgHooks = [2]mapstructure.DecodeHookFunc{cfgComposeHooks(false), cfgComposeHooks(true)}
	})
	if weak {
		return cfgHooks[1]
	}
	return cfgHooks[0]
}

func cfgComposeHooks(weak bool) mapstructure.DecodeHookFunc {
	return mapstructure.ComposeDecodeHookFunc(cfgListHook(weak), cfgDurationHook, cfgIntHook(weak),
		cfgBoolHook(weak), cfgPromiseHook, cfgCheckSpecHook, cfgStrictObjectHook)
}

func cfgMatchName(a, b string) bool { return a == b }

// cfgDecode decodes in into out as Load does.
func cfgDecode(in, out any, weak bool) error {
	hooks := cfgDecodeHooks(weak)
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook:       hooks,
		WeaklyTypedInput: weak,
		MatchName:        cfgMatchName,
		TagName:          "koanf",
		Result:           out,
	})
	if err != nil {
		return err
	}
	return d.Decode(in)
}

// cfgListHook: a list must be a list; text in a weak layer is a
// comma-separated one.
func cfgListHook(weak bool) mapstructure.DecodeHookFuncType {
	return func(from, to reflect.Type, data any) (any, error) {
		if to.Kind() != reflect.Slice || from.Kind() == reflect.Slice || from.Kind() == reflect.Array {
			return data, nil
		}
		if s, ok := data.(string); ok && weak {
			out := []string{}
			for _, item := range strings.Split(s, ",") {
				if item = strings.TrimSpace(item); item != "" {
					out = append(out, item)
				}
			}
			return out, nil
		}
		return nil, cfgTypeError(to, data)
	}
}

// cfgDurationHook: Go syntax ("90s", "1h30m"); a bare 0 is accepted, any
// other number has no unit.
func cfgDurationHook(_, to reflect.Type, data any) (any, error) {
	if to != cfgDurationType {
		return data, nil
	}
	switch d := data.(type) {
	case time.Duration:
		return d, nil
	case string:
		if dur, err := time.ParseDuration(strings.TrimSpace(d)); err == nil {
			return dur, nil
		}
	case int, int64, uint64, float64:
		if reflect.ValueOf(d).IsZero() {
			return time.Duration(0), nil
		}
		return nil, errors.New(`expected a duration with a unit such as "90s" or "2h", got ` + cfgDescribe(data))
	}
	return nil, cfgTypeError(to, data)
}

// cfgIntHook: whole numbers that fit; text only in a weak layer.
func cfgIntHook(weak bool) mapstructure.DecodeHookFuncType {
	return func(_, to reflect.Type, data any) (any, error) {
		if to.Kind() != reflect.Int {
			return data, nil
		}
		tooBig := func() error { return fmt.Errorf("out of range, got %s", cfgDescribe(data)) }
		switch n := data.(type) {
		case int:
			return n, nil
		case int64:
			return int(n), nil
		case uint64:
			if n > math.MaxInt {
				return nil, tooBig()
			}
			return int(n), nil
		case float64:
			if n != math.Trunc(n) {
				break
			}
			if math.Abs(n) >= math.MaxInt {
				return nil, tooBig()
			}
			return int(n), nil
		case string:
			if !weak {
				break
			}
			i, err := strconv.Atoi(strings.TrimSpace(n))
			if errors.Is(err, strconv.ErrRange) {
				return nil, tooBig()
			}
			if err == nil {
				return i, nil
			}
		}
		return nil, cfgTypeError(to, data)
	}
}

// cfgBoolHook: text in a weak layer must say true or false (koanf's weak
// decoding would read "" as false).
func cfgBoolHook(weak bool) mapstructure.DecodeHookFuncType {
	return func(_, to reflect.Type, data any) (any, error) {
		if s, ok := data.(string); ok && weak && to.Kind() == reflect.Bool {
			if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
				return b, nil
			}
			return nil, cfgTypeError(to, data)
		}
		return data, nil
	}
}

// cfgPromiseHook: a completion promise is its text, or {text, condition}.
func cfgPromiseHook(_, to reflect.Type, data any) (any, error) {
	if to != cfgPromiseType {
		return data, nil
	}
	switch v := data.(type) {
	case Promise:
		return v, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, cfgProblems{{"", "empty promise text"}}
		}
		return Promise{Text: v}, nil
	case map[string]any:
		var (
			p     Promise
			probs cfgProblems
		)
		for _, name := range slices.Sorted(maps.Keys(v)) {
			if name != "text" && name != "condition" {
				probs = append(probs, cfgProblem{"." + name, "unknown key" + cfgSuggestFrom(name, []string{"text", "condition"}) + " (a promise has text and condition)"})
			}
		}
		switch text := v["text"].(type) {
		case string:
			if strings.TrimSpace(text) == "" {
				probs = append(probs, cfgProblem{".text", "empty promise text"})
			}
			p.Text = text
		case nil:
			probs = append(probs, cfgProblem{".text", "missing: a promise object needs its text"})
		default:
			probs = append(probs, cfgProblem{".text", cfgTypeMsg(reflect.TypeFor[string](), text)})
		}
		switch cond := v["condition"].(type) {
		case nil:
		case string:
			probs = append(probs, cfgOneOfConditions(".condition", cond)...)
			p.Condition = cond
		default:
			probs = append(probs, cfgProblem{".condition", cfgTypeMsg(reflect.TypeFor[string](), cond)})
		}
		if len(probs) > 0 {
			return nil, probs
		}
		return p, nil
	}
	return nil, cfgTypeError(to, data)
}

func cfgOneOfConditions(at, cond string) []cfgProblem {
	if slices.Contains(Conditions, cond) {
		return nil
	}
	return []cfgProblem{{at, fmt.Sprintf("unknown condition %q (want one of %s)", cond, strings.Join(Conditions, ", "))}}
}

// Problems: what is wrong with a value, where in it (sub: "[2].text").

type cfgProblem struct{ sub, msg string }

// cfgProblems is a hook's error: its problems, each where it is.
type cfgProblems []cfgProblem

func (ps cfgProblems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = strings.TrimPrefix(p.sub+": "+p.msg, ": ")
	}
	return strings.Join(lines, "; ")
}

func cfgOne(msg string, args ...any) []cfgProblem {
	return []cfgProblem{{msg: fmt.Sprintf(msg, args...)}}
}

func cfgTypeError(to reflect.Type, data any) error {
	return &mapstructure.UnconvertibleTypeError{Expected: reflect.New(to).Elem(), Value: data}
}

// cfgFlatten turns a decoder's error into problems, each at its path
// (".workflow.stop_hook.allow_exit_on[1]"), worded for people.
func cfgFlatten(err error) []cfgProblem {
	var out []cfgProblem
	var walk func(at string, err error)
	walk = func(at string, err error) {
		switch e := err.(type) {
		case nil:
		case *mapstructure.DecodeError:
			name := e.Name()
			if name != "" && !strings.HasPrefix(name, "[") {
				name = "." + name
			}
			walk(at+name, e.Unwrap())
		case cfgProblems:
			for _, p := range e {
				out = append(out, cfgProblem{at + p.sub, p.msg})
			}
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
	msg := "expected " + cfgWant(want) + ", got " + cfgDescribe(got)
	if want.Kind() == reflect.String {
		switch got.(type) {
		case int, int64, uint64, float64, bool, time.Time:
			msg += " (quote it to make it a string)"
		}
	}
	return msg
}

func cfgWant(t reflect.Type) string {
	switch {
	case t == cfgDurationType:
		return `a duration such as "90s" or "2h"`
	case t == cfgPromiseType:
		return "a string or {text, condition}"
	case t == cfgCheckSpecType:
		return "a checker name or {type, …}"
	case t.Kind() == reflect.Slice && t.Elem() == cfgPromiseType:
		return "a list of promises"
	case t.Kind() == reflect.Slice && t.Elem() == cfgCheckSpecType:
		return "a list of checks"
	case t.Kind() == reflect.Slice:
		return "a list"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Int:
		return "an integer"
	case t.Kind() == reflect.String:
		return "a string"
	}
	return t.String()
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

// Rules: each key's values, and each number's range.

type cfgRule interface {
	check(v any) []cfgProblem
}

type cfgRuleFunc func(v any) []cfgProblem

func (f cfgRuleFunc) check(v any) []cfgProblem { return f(v) }

// cfgRange is a number key's range, both ends included.
type cfgRange[T int | float64] struct{ min, max T }

func (r cfgRange[T]) check(v any) []cfgProblem {
	switch n := v.(T); {
	case n < r.min:
		return cfgOne("must be %v or more, got %v", r.min, n)
	case n > r.max:
		return cfgOne("must be at most %v, got %v", r.max, n)
	}
	return nil
}

func (r cfgRange[T]) String() string { return fmt.Sprintf("%v to %v", r.min, r.max) }

// cfgIntRange and cfgFloatRange are the ranges of integer and of
// fractional keys.
type (
	cfgIntRange   = cfgRange[int]
	cfgFloatRange = cfgRange[float64]
)

// cfgDurRange is a duration key's range: from 0 (or more than 0 when
// positive) to max.
type cfgDurRange struct {
	positive bool
	max      time.Duration
}

func (r cfgDurRange) check(v any) []cfgProblem {
	switch d := v.(time.Duration); {
	case d < 0:
		return cfgOne("must not be negative, got %s", FormatDuration(d))
	case d == 0 && r.positive:
		return cfgOne("must be more than 0, got %s", FormatDuration(d))
	case d > r.max:
		return cfgOne("must be at most %s, got %s", FormatDuration(r.max), FormatDuration(d))
	}
	return nil
}

func (r cfgDurRange) String() string {
	if r.positive {
		return "more than 0s, at most " + FormatDuration(r.max)
	}
	return "0s to " + FormatDuration(r.max)
}

var (
	cfgLogLevels     = []string{"debug", "info", "warn", "error"}
	cfgBeadsErrModes = []string{"allow", "block"}
	cfgSubagentModes = []string{"allow", "drive"}
	cfgStuckActions  = []string{"block", "reopen", "report"}
	cfgRunAgents     = []string{"claude", "codex"}
	cfgRunSessions   = []string{"fresh", "resume"}
)

// cfgRules: a key's rule, checked on its decoded value. Every number has a
// range (documented in docs/configuration.md).
var cfgRules = map[string]cfgRule{
	"workflow.stop_hook.max_cycles":     cfgIntRange{0, 100000},
	"workflow.stop_hook.next_ids":       cfgIntRange{0, 50},
	"workflow.no_progress_cycles":       cfgIntRange{0, 1000},
	"workflow.done_token.max":           cfgIntRange{0, 100000},
	"workflow.feedback_limit":           cfgIntRange{0, 1000},
	"workflow.stuck_after":              cfgDurRange{max: 30 * 24 * time.Hour},
	"workflow.max_duration":             cfgDurRange{max: 30 * 24 * time.Hour},
	"beads.timeout":                     cfgDurRange{positive: true, max: time.Hour},
	"beads.max_processes":               cfgIntRange{1, 256},
	"beads.queue_timeout":               cfgDurRange{positive: true, max: time.Hour},
	"workflow.done_token.prefix":        cfgRuleFunc(cfgNonEmpty),
	"workflow.stop_hook.allow_exit_on":  cfgRuleFunc(cfgEachCondition),
	"workflow.stop_hook.on_beads_error": cfgOneOf(cfgBeadsErrModes),
	"workflow.stop_hook.subagent_stop":  cfgOneOf(cfgSubagentModes),
	"beads.bin":                         cfgRuleFunc(cfgNonEmpty),
	"state.dir":                         cfgRuleFunc(cfgNonEmpty),
	"log.level":                         cfgOneOf(cfgLogLevels),
	"workflow.stuck_action":             cfgOneOf(cfgStuckActions),
	"workflow.worktrees.pattern":        cfgRuleFunc(cfgNonEmpty),
	"claim.patterns":                    cfgRuleFunc(cfgRegexps),
	"claim.arm_patterns":                cfgRuleFunc(cfgRegexps),
	"claim.runs_dir":                    cfgRuleFunc(cfgNonEmpty),
	"run.agent":                         cfgOneOf(cfgRunAgents),
	"run.session":                       cfgOneOf(cfgRunSessions),
	"run.claude_bin":                    cfgRuleFunc(cfgNonEmpty),
	"run.codex_bin":                     cfgRuleFunc(cfgNonEmpty),
	"run.dir":                           cfgRuleFunc(cfgNonEmpty),
	"workflow.budget.session_tokens":    cfgIntRange{0, 1_000_000_000_000},
	"workflow.budget.epic_tokens":       cfgIntRange{0, 1_000_000_000_000},
	"workflow.budget.session_cost":      cfgFloatRange{0, 1e9},
	"workflow.budget.epic_cost":         cfgFloatRange{0, 1e9},
	"workflow.notify":                   cfgRuleFunc(cfgNotifyRule),
	"usage.prices":                      cfgRuleFunc(cfgPricesRule),
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

func cfgNonEmpty(v any) []cfgProblem {
	if strings.TrimSpace(v.(string)) == "" {
		return cfgOne("must not be empty")
	}
	return nil
}

func cfgOneOf(set []string) cfgRuleFunc {
	return func(v any) []cfgProblem {
		if s := v.(string); !slices.Contains(set, s) {
			return cfgOne("must be one of %s, got %q", strings.Join(set, ", "), s)
		}
		return nil
	}
}

func cfgEachCondition(v any) []cfgProblem {
	var probs []cfgProblem
	for i, s := range v.([]string) {
		probs = append(probs, cfgOneOfConditions(fmt.Sprintf("[%d]", i), s)...)
	}
	return probs
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
	return cfgSuggestFrom(name, cfgSchema.children(section))
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
	cands := slices.Sorted(maps.Keys(EnvVars))
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
