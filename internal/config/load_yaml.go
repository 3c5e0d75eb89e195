package config

import "github.com/knadh/koanf/parsers/yaml"

// cfgParseYAML parses a project.yaml into nested maps.
var cfgParseYAML = yaml.Parser().Unmarshal
