package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckOptionProblems(t *testing.T) {
	for _, tt := range []struct {
		spec any
		want string // "" = valid
	}{
		{"beads", ""},
		{"nope", `unknown checker "nope"`},
		{map[string]any{"type": "command", "run": "go test ./...", "timeout": "5m", "tail_lines": 30, "dir": "sub"}, ""},
		{map[string]any{"type": "command"}, ".run: must not be empty"},
		{map[string]any{"type": "command", "run": " "}, ".run: must not be empty"},
		{map[string]any{"type": "command", "run": "x", "timeout": "soon"}, ".timeout: expected a duration"},
		{map[string]any{"type": "command", "run": "x", "tail_lines": -1}, ".tail_lines: must be 0 or more, got -1"},
		{map[string]any{"type": "command", "run": "x", "tail_lines": 20000}, ".tail_lines: must be at most 10000, got 20000"},
		{map[string]any{"type": "command", "run": "x", "timeout": "0s"}, ".timeout: must be more than 0, got 0s"},
		{map[string]any{"type": "command", "run": "x", "timeout": "48h"}, ".timeout: must be at most 24h, got 48h"},
		{map[string]any{"type": "command", "run": "x", "timeout": 30}, `.timeout: expected a duration such as "90s" or "2h", got number 30`},
		{"command", ".run: must not be empty"},
		{5, "expected a checker name or {type, …}, got number 5"},
		{map[string]any{"run": "x"}, `.type: unknown checker ""`},
		{map[string]any{"type": "promise", "texts": []any{"A", " "}}, ".texts[1]: must not be empty"},
		{map[string]any{"type": "command", "run": "x", "cmd": "y"}, ".cmd: unknown option for the command checker"},
		{map[string]any{"type": "files", "paths": []any{}}, ".paths: must not be empty"},
		{map[string]any{"type": "files", "paths": []any{"a", 3}}, ".paths[1]: expected a string, got number 3"},
		{map[string]any{"type": "files", "paths": "a"}, `.paths: expected a list, got string "a"`},
		{map[string]any{"type": "files", "paths": []any{"a"}, "non_empty": "yes"}, ".non_empty: expected true or false"},
		{map[string]any{"type": "beads", "epic": "x"}, ".epic: unknown option"},
		{map[string]any{"type": "composite", "mode": "some", "checks": []any{"beads"}}, `.mode: must be one of all_must_pass, any, got "some"`},
		{map[string]any{"type": "composite", "checks": []any{map[string]any{"type": "command"}}}, ".checks[0].run: must not be empty"},
		{map[string]any{"type": "composite", "checks": []any{map[string]any{"type": "composite", "checks": []any{"beads", "nope"}}}}, `.checks[0].checks[1].type: unknown checker "nope"`},
		{map[string]any{"type": "composite", "checks": []any{}}, ".checks: must not be empty"},
		{map[string]any{"type": "plan", "name": ""}, ".name: must not be empty"},
	} {
		// The spec as the only item of workflow.checks (JSON is YAML).
		doc, _ := json.Marshal(map[string]any{"workflow": map[string]any{"checks": []any{tt.spec}}})
		var got []string
		var list ErrorList
		errors.As(ValidateYAML("p.yaml", doc), &list)
		for _, e := range list {
			got = append(got, strings.TrimPrefix(e.Key, "workflow.checks[0]")+": "+e.Msg)
		}
		j := strings.Join(got, "; ")
		if (tt.want == "") != (j == "") || !strings.Contains(j, tt.want) {
			t.Errorf("%v: problems %q, want %q", tt.spec, j, tt.want)
		}
	}
}
