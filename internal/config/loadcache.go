package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/google/renameio/v2"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// ConfigCache keeps the decoded values of each project.yaml a Load read,
// by the file's content and the build that decoded them (sha256): the
// next Load of the same file, by the same runtasks, sets those values
// from JSON instead of parsing the YAML again, which was the slowest part
// of a hook's configuration load (docs/benchmarks.md). Only a layer that
// loaded without a problem is kept; a cache entry that does not decode is
// ignored and the file parsed. The entries are the user's own files (as
// the trust store is): whoever can write them can already run anything
// as the user.
type ConfigCache struct {
	// Dir holds the entries (the hooks: $XDG_CACHE_HOME/runtasks/config,
	// else ~/.cache/runtasks/config).
	Dir string
	// Build names the runtasks that decodes (the hooks: its binary's
	// path, size and time): an entry of another build is not used.
	Build string
}

// cfgCacheMax is how many entries Dir keeps: writing one more removes the
// oldest.
const cfgCacheMax = 64

// cfgCacheEntry is one cached file layer. Its codec is generated
// (loadcache_easyjson.go): a hook reads an entry at every stop.
//
//easyjson:json
type cfgCacheEntry struct {
	Build string `json:"build"`
	// Values are the file's keys whose decoded value is not the default,
	// with that value's JSON as text (text, not an embedded JSON value:
	// the generated decoder would read an embedded null as no value).
	Values map[string]string `json:"values"`
	// Defaults are the file's keys that it sets to the default value:
	// the file is the first layer over the defaults, so they change
	// nothing and are not decoded again, only named as set by the file.
	// (runtasks install writes every key, most of them as they are.)
	Defaults []string `json:"defaults,omitempty"`
	// Errors are the file's problems, when DecodeFileEntry found some
	// (never in a cache entry: a file with problems is not cached).
	Errors ErrorList `json:"errors,omitempty"`
}

// path is the entry, for this build, of the file whose content's
// trust.Sum is sum: two builds (runtasks and runtasks-hook, or two
// versions) keep an entry each.
func (c *ConfigCache) path(sum string) string {
	h := sha256.New()
	h.Write([]byte(c.Build))
	h.Write([]byte{0})
	h.Write([]byte(sum))
	return filepath.Join(c.Dir, hex.EncodeToString(h.Sum(nil)[:16])+".json")
}

// read is the cached layer of the file holding data, if there is one of
// this build.
func (c *ConfigCache) read(src, sum string) (cfgLayer, bool) {
	if c == nil || c.Dir == "" || c.Build == "" {
		return cfgLayer{}, false
	}
	data, err := agentfile.Read(c.path(sum), 1<<20)
	if err != nil {
		return cfgLayer{}, false
	}
	var e cfgCacheEntry
	if err := json.Unmarshal(data, &e); err != nil || e.Build != c.Build {
		return cfgLayer{}, false
	}
	return e.layer(src)
}

// layer is the cached file layer the entry holds, for the file src;
// false when it names a key this build does not know.
func (e cfgCacheEntry) layer(src string) (cfgLayer, bool) {
	if len(e.Errors) > 0 {
		return cfgLayer{}, false
	}
	l := newCfgLayer(false)
	l.cached = make(map[string]json.RawMessage, len(e.Values))
	for key, raw := range e.Values {
		l.cached[key] = json.RawMessage(raw)
		l.srcs[key] = src
	}
	for _, key := range e.Defaults {
		l.srcs[key] = src
	}
	for key := range l.srcs {
		if cfgSchema.byKey[key] == nil {
			return cfgLayer{}, false // a key this build does not know
		}
	}
	return l, true
}

// write keeps the values the file layer l set in cfg (decoded, checked).
func (c *ConfigCache) write(sum string, l cfgLayer, cfg *Config) {
	if c == nil || c.Dir == "" || c.Build == "" {
		return
	}
	e, err := cfgEntryOf(l, cfg)
	if err != nil {
		return
	}
	c.writeEntry(sum, e)
}

// writeEntry keeps e as this build's entry for the file whose content's
// trust.Sum is sum.
func (c *ConfigCache) writeEntry(sum string, e cfgCacheEntry) {
	if c == nil || c.Dir == "" || c.Build == "" {
		return
	}
	e.Build = c.Build
	out, err := json.Marshal(e)
	if err != nil || os.MkdirAll(c.Dir, 0o700) != nil {
		return
	}
	c.prune()
	renameio.WriteFile(c.path(sum), out, 0o600)
}

// cfgEntryOf is the entry for the file layer l, whose values cfg holds
// (decoded over the defaults, checked).
func cfgEntryOf(l cfgLayer, cfg *Config) (cfgCacheEntry, error) {
	e := cfgCacheEntry{Values: map[string]string{}}
	into := reflect.ValueOf(cfg).Elem()
	defaults := cfgDefaultConfig()
	def := reflect.ValueOf(&defaults).Elem()
	for key := range l.vals {
		f := cfgSchema.byKey[key]
		raw, err := json.Marshal(into.FieldByIndex(f.index).Interface())
		if err != nil {
			return cfgCacheEntry{}, err
		}
		if d, err := json.Marshal(def.FieldByIndex(f.index).Interface()); err == nil && bytes.Equal(raw, d) {
			e.Defaults = append(e.Defaults, key)
			continue
		}
		e.Values[key] = string(raw)
	}
	slices.Sort(e.Defaults)
	return e, nil
}

// DecodeFileEntry decodes a project.yaml's content (src names the file in
// its problems) as Load does, into the JSON of a cache entry: the values
// that are not the defaults, the keys set to them, or the problems
// (errors). A build without a YAML parser (runtasks-hook) asks for it
// through LoadOptions.DecodeFile (runtasks config decode) and keeps it
// in its cache.
func DecodeFileEntry(src string, data []byte) ([]byte, error) {
	if cfgParseYAML == nil {
		return nil, errors.New("this build of runtasks reads no YAML")
	}
	l := cfgFileLayer(src, data)
	cfg := cfgDefaultConfig()
	errs := append(ErrorList(nil), l.errs...)
	errs = append(errs, l.decodeInto(&cfg)...)
	e := cfgCacheEntry{Errors: errs}
	if len(errs) == 0 {
		var err error
		if e, err = cfgEntryOf(l, &cfg); err != nil {
			return nil, err
		}
	}
	return json.Marshal(e)
}

// cfgDecodedElsewhere is the file layer of the project.yaml at src (its
// content data, whose trust.Sum is sum) for a build that links no YAML
// parser: opts.DecodeFile has it decoded (DecodeFileEntry, by runtasks),
// and the entry is kept as this build's, so that the next Load of the
// same content reads it from the cache.
func cfgDecodedElsewhere(opts LoadOptions, src string, data []byte, sum string) cfgLayer {
	failed := func(msg string) cfgLayer {
		l := newCfgLayer(false)
		l.errs = []*KeyError{{Source: src, Msg: msg}}
		return l
	}
	if opts.DecodeFile == nil {
		return failed("this build of runtasks reads no YAML, and nothing was given to decode it")
	}
	out, err := opts.DecodeFile(src, data)
	if err != nil {
		return failed(err.Error())
	}
	var e cfgCacheEntry
	if err := json.Unmarshal(out, &e); err != nil {
		return failed(fmt.Sprintf("the decoded configuration is not an entry: %v", err))
	}
	if len(e.Errors) > 0 {
		l := newCfgLayer(false)
		for _, ke := range e.Errors {
			if ke != nil {
				l.errs = append(l.errs, &KeyError{Source: src, Key: ke.Key, Msg: ke.Msg})
			}
		}
		return l
	}
	l, ok := e.layer(src)
	if !ok {
		return failed("the decoded configuration names a key this build does not know")
	}
	opts.Cache.writeEntry(sum, e)
	return l
}

// prune removes the oldest entries beyond cfgCacheMax-1.
func (c *ConfigCache) prune() {
	entries, err := os.ReadDir(c.Dir)
	if err != nil || len(entries) < cfgCacheMax {
		return
	}
	type aged struct {
		name string
		mod  time.Time
	}
	var all []aged
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			all = append(all, aged{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b aged) int { return a.mod.Compare(b.mod) })
	for _, a := range all[:max(0, len(all)-cfgCacheMax+1)] {
		os.Remove(filepath.Join(c.Dir, a.name))
	}
}

// errCacheEntry: a cached value that no longer decodes.
var errCacheEntry = errors.New("config cache entry does not decode")

// applyCached sets the cached layer's values over cfg.
func (l cfgLayer) applyCached(cfg *Config) error {
	into := reflect.ValueOf(cfg).Elem()
	for key, raw := range l.cached {
		field := into.FieldByIndex(cfgSchema.byKey[key].index)
		field.SetZero()
		if err := json.Unmarshal(raw, field.Addr().Interface()); err != nil {
			return errCacheEntry
		}
		if rule := cfgRules[key]; rule != nil && len(rule.check(field.Interface())) > 0 {
			return errCacheEntry
		}
	}
	return nil
}
