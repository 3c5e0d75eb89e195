//go:build runtasks_hook

package config

// cfgParseYAML is nil in the hook-only build: yaml.v3's package
// initialisation and pages cost every stop about 0.1–0.25 ms, for a
// parse the configuration cache makes once per project.yaml content
// (load_yaml.go, LoadOptions.DecodeFile).
var cfgParseYAML func([]byte) (map[string]any, error)
