package config

import (
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// cfgLoadByLayer is what Load must give for the layers of opts, made
// from each layer loaded alone: a key takes its value and its source from
// the highest layer that sets it, else the default.
func cfgLoadByLayer(t *testing.T, opts LoadOptions) (*Config, Sources) {
	t.Helper()
	empty := cfgProject(t, "")
	want, wantSrc := cfgLoad(t, LoadOptions{StartDir: empty})
	for _, alone := range []LoadOptions{
		{StartDir: opts.StartDir},                // the project.yaml
		{StartDir: empty, Environ: opts.Environ}, // the environment
		{StartDir: empty, Flags: opts.Flags},     // the flags
	} {
		cfg, src := cfgLoad(t, alone)
		for _, key := range cfgKeys {
			if src[key] != SourceDefault {
				v, _ := cfg.Value(key)
				cfgSet(want, key, v)
				wantSrc[key] = src[key]
			}
		}
	}
	root, file, err := FindProject(opts)
	if err != nil {
		t.Fatal(err)
	}
	want.Root, want.File = root, file
	return want, wantSrc
}

// cfgSet sets the field of key in c to v.
func cfgSet(c *Config, key string, v any) {
	rv := reflect.ValueOf(c).Elem()
	for _, part := range strings.Split(key, ".") {
		for i := range rv.NumField() {
			if rv.Type().Field(i).Tag.Get("koanf") == part {
				rv = rv.Field(i)
				break
			}
		}
	}
	rv.Set(reflect.ValueOf(v))
}

// cfgOtherValues gives every key a valid value other than its default, as
// project.yaml text and as environment text ("" = it cannot be written as
// one variable: a list of objects). The two differ, so that the layer
// that wins shows.
var cfgOtherValues = map[string]struct{ yaml, env string }{
	"workflow.epic":                                {"bd-file", "bd-env"},
	"workflow.stop_hook.enabled":                   {"false", "0"},
	"workflow.stop_hook.check_ready_tasks":         {"false", "false"},
	"workflow.stop_hook.check_in_progress":         {"false", "FALSE"},
	"workflow.stop_hook.max_cycles":                {"7", "9"},
	"workflow.stop_hook.allow_exit_on":             {"[always, all_blocked]", "all_complete"},
	"workflow.stop_hook.completion_promises":       {`["SHIPPED", {text: "GIVING UP", condition: always}]`, "DONE"},
	"workflow.stop_hook.on_beads_error":            {"block", "block"},
	"workflow.stop_hook.subagent_stop":             {"drive", "drive"},
	"workflow.stop_hook.checkpoint_requires_clean": {"false", "f"},
	"workflow.stop_hook.next_ids":                  {"5", "50"},
	"workflow.done_token.required":                 {"true", "1"},
	"workflow.done_token.prefix":                   {"FIN", "END"},
	"workflow.done_token.max":                      {"4", "6"},
	"workflow.no_progress_cycles":                  {"0", "8"},
	"workflow.stuck_after":                         {"90m", "45m"},
	"workflow.max_duration":                        {"3h", "1h30m"},
	"workflow.stuck_action":                        {"reopen", "report"},
	"workflow.worktrees.pattern":                   {"wt/{id}", "trees/{id}"},
	"workflow.checks":                              {`[beads, {type: command, run: "go test ./...", tail_lines: 20}]`, "plan, beads"},
	"workflow.feedback_limit":                      {"5", "7"},
	"workflow.budget.session_tokens":               {"2000000", "1000"},
	"workflow.budget.session_cost":                 {"5", "1.5"},
	"workflow.budget.epic_tokens":                  {"10000000", "5000"},
	"workflow.budget.epic_cost":                    {"25.5", "7"},
	"workflow.notify":                              {`[{run: "true", events: [budget], timeout: 5s}, {run: "echo", events: [complete, no_progress]}]`, ""},
	"workflow.verify.checks":                       {`[{type: command, run: "make test"}]`, "beads"},
	"workflow.verify.overrides":                    {`[{issue_type: docs, checks: []}]`, ""},
	"workflow.verify.on_unverified":                {"warn", "block"},
	"workflow.verify.max_per_stop":                 {"5", "9"},
	"workflow.verify.task_commands":                {"true", "1"},
	"beads.bin":                                    {"/opt/bd", "/env/bd"},
	"beads.dir":                                    {"../store/.beads", "store"},
	"beads.timeout":                                {"1m30s", "30s"},
	"beads.max_processes":                          {"16", "1"},
	"beads.queue_timeout":                          {"2m", "5s"},
	"state.dir":                                    {"/var/tmp/runtasks", "st"},
	"log.file":                                     {"runtasks.log", "env.log"},
	"log.level":                                    {"debug", "error"},
	"prompts.run_tasks":                            {"prompts/run.md", "env.md"},
	"claim.patterns":                               {`['^take (?P<id>\S+)$', '^grab (\S+)$']`, `^claim (?P<id>\S+)$`},
	"claim.arm_patterns":                           {`['^drive (?P<id>\S+)$']`, `^go (?P<id>\S+)$`},
	"claim.runs_dir":                               {"var/runs", "r"},
	"claim.templates":                              {"tmpl", "t"},
	"claim.actor":                                  {"alice", "bob"},
	"run.agent":                                    {"codex", "codex"},
	"run.session":                                  {"resume", "resume"},
	"run.claude_bin":                               {"/opt/claude", "/env/claude"},
	"run.codex_bin":                                {"/opt/codex", "/env/codex"},
	"run.max_task_failures":                        {"5", "7"},
	"run.dir":                                      {"cycles", "c"},
	"run.max_merge_failures":                       {"5", "7"},
	"usage.prices":                                 {`[{model: "fake-*", input: 1, output: 2, cache_read: 0.1, cache_write: 1.25}]`, ""},
}

// cfgYAMLOf writes keys (dotted) with their YAML values as a nested
// project.yaml.
func cfgYAMLOf(vals map[string]string) string {
	tree := map[string]any{}
	for key, v := range vals {
		parts := strings.Split(key, ".")
		m := tree
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = v
	}
	var b strings.Builder
	var write func(m map[string]any, indent string)
	write = func(m map[string]any, indent string) {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			switch v := m[name].(type) {
			case string:
				b.WriteString(indent + name + ": " + v + "\n")
			case map[string]any:
				b.WriteString(indent + name + ":\n")
				write(v, indent+"  ")
			}
		}
	}
	write(tree, "")
	return b.String()
}

// TestLoadMergesLayers: for every key set in the project.yaml, in the
// environment, or in both, alone and all together, and under flags, Load
// gives each key the value and the source of the highest layer that sets
// it (a list replaces the list below whole).
func TestLoadMergesLayers(t *testing.T) {
	for _, key := range ConfigKeys() {
		if _, ok := cfgOtherValues[key]; !ok {
			t.Errorf("cfgOtherValues has no value for %s: give it one", key)
		}
	}
	for key := range cfgOtherValues {
		if !slices.Contains(cfgKeys, key) {
			t.Errorf("cfgOtherValues names %s, not a key", key)
		}
	}
	type layers struct {
		file map[string]string // key -> YAML value
		env  []string
		args []string
	}
	cases := map[string]layers{}
	allFile, allEnv := map[string]string{}, []string(nil)
	for _, key := range ConfigKeys() {
		v := cfgOtherValues[key]
		allFile[key] = v.yaml
		cases["file "+key] = layers{file: map[string]string{key: v.yaml}}
		if v.env != "" {
			env := EnvName(key) + "=" + v.env
			allEnv = append(allEnv, env)
			cases["env "+key] = layers{env: []string{env}}
			cases["env over file "+key] = layers{file: map[string]string{key: v.yaml}, env: []string{env}}
		}
	}
	cases["every key in the file"] = layers{file: allFile}
	cases["every key in the environment"] = layers{env: allEnv}
	cases["every key in both"] = layers{file: allFile, env: allEnv}
	cases["flags over both"] = layers{file: allFile, env: allEnv,
		args: []string{"--epic=bd-flag", "--max-cycles=0", "--taskmaster=false", "--bd=/flag/bd", "--state-dir=/s", "--log-level=info"}}
	cases["flags alone"] = layers{args: []string{"--epic=bd-flag", "--max-cycles=3"}}
	cases["nothing"] = layers{}
	// A shorter list over a longer one replaces it whole.
	cases["short lists over long ones"] = layers{
		file: map[string]string{
			"workflow.stop_hook.completion_promises": `["A", "B", "C", "D", "E", "F"]`,
			"claim.patterns":                         `['a', 'b', 'c']`,
		},
		env: []string{EnvName("workflow.stop_hook.completion_promises") + "=Z", EnvName("claim.patterns") + "="},
	}

	defaults := Defaults()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := cfgProject(t, cfgYAMLOf(c.file))
			opts := LoadOptions{StartDir: dir, Environ: c.env}
			if c.args != nil {
				opts.Flags = cfgFlags(t, c.args...)
			}
			got, gotSrc := cfgLoad(t, opts)
			want, wantSrc := cfgLoadByLayer(t, opts)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Load differs from the layers loaded alone:\n got %#v\nwant %#v", *got, *want)
			}
			if !reflect.DeepEqual(gotSrc, wantSrc) {
				t.Errorf("sources differ:\n got %v\nwant %v", gotSrc, wantSrc)
			}
			// Every key a layer set has a value other than its default, so
			// that copying it over the defaults shows.
			for key, src := range gotSrc {
				if src == SourceDefault {
					continue
				}
				v, _ := got.Value(key)
				if d, _ := defaults.Value(key); reflect.DeepEqual(v, d) && name != "flags over both" {
					t.Errorf("%s from %s equals its default %#v: pick another value", key, src, d)
				}
			}
			if len(c.file) > 0 && got.File != filepath.Join(dir, ProjectFile) {
				t.Errorf("File = %q", got.File)
			}
		})
	}
}

// TestLoadLeavesDefaultsAlone: a Load that overrides a list does not
// change the defaults the next Load starts from.
func TestLoadLeavesDefaultsAlone(t *testing.T) {
	dir := cfgProject(t, "")
	cfg, _ := cfgLoad(t, LoadOptions{StartDir: dir})
	cfg.Workflow.StopHook.AllowExitOn[0] = "changed"
	cfg.Claim.Patterns[0] = "changed"
	again, _ := cfgLoad(t, LoadOptions{StartDir: dir})
	if want := cfgDefaults(dir); !reflect.DeepEqual(*again, want) {
		t.Errorf("the second Load:\n got %#v\nwant %#v", *again, want)
	}
}
