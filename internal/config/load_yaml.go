//go:build !runtasks_hook

package config

import "github.com/knadh/koanf/parsers/yaml"

// cfgParseYAML parses a project.yaml into nested maps. The hook-only
// build (runtasks-hook) links no YAML parser (load_noyaml.go): its
// project.yaml is decoded by runtasks (LoadOptions.DecodeFile) once per
// content, then read from the configuration cache.
var cfgParseYAML = yaml.Parser().Unmarshal
