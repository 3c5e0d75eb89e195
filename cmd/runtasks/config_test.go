package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/usage"
)

// configFactory is a Factory whose working directory is wd and whose
// environment is env, with buffers for output.
func configFactory(wd string, env ...string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Factory{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		Environ:    func() []string { return env },
		Getwd:      func() (string, error) { return wd, nil },
		Now:        time.Now,
		Executable: func() (string, error) { return "/usr/bin/runtasks", nil },
	}, &out, &errb
}

// configProject makes a project root (with .git) holding project.yaml when
// body is not empty.
func configProject(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if body != "" {
		configWriteFile(t, filepath.Join(dir, "project.yaml"), body)
	}
	return dir
}

func configWriteFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// configShowLine matches one key line of config show: key = value, padding, # source.
func configShowLine(key, value, source string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key+" = "+value) + ` +# ` + regexp.QuoteMeta(source) + `$`)
}

func TestConfigShow(t *testing.T) {
	type line struct{ key, value, source string }
	tests := []struct {
		name  string
		file  string
		env   []string
		args  []string
		lines []line // source "FILE" = the project.yaml
		head  []string
	}{
		{name: "defaults",
			lines: []line{
				{"workflow.stop_hook.max_cycles", "50", "default"},
				{"workflow.epic", `""`, "default"},
				{"workflow.stuck_after", `"2h"`, "default"},
				{"workflow.max_duration", `"0s"`, "default"},
				{"beads.timeout", `"10s"`, "default"},
				{"workflow.stop_hook.allow_exit_on", `["all_complete","all_blocked","context_checkpoint"]`, "default"},
				{"workflow.stop_hook.completion_promises", `["ALL TASKS COMPLETE","EPIC COMPLETE","BLOCKED - NEEDS USER","CONTEXT LIMIT - CHECKPOINT"]`, "default"},
				{"workflow.done_token.required", "false", "default"},
			},
			head: []string{"# project file: none (no project.yaml in the project root)",
				"# price table: runtasks' own of " + usage.PricesDate + ", after usage.prices (docs/usage.md)",
				`#   "BLOCKED - NEEDS USER" -> all_blocked`,
				`#   "CONTEXT LIMIT - CHECKPOINT" -> context_checkpoint`},
		},
		{name: "every layer",
			file: "workflow:\n  epic: bd-file\n  stop_hook:\n    max_cycles: 20\n    completion_promises:\n      - SHIPPED\n      - {text: GIVING UP, condition: always}\n",
			env:  []string{"RUNTASKS_EPIC=bd-x7y8", "RUNTASKS_WORKFLOW__STUCK_AFTER=90m", "RUNTASKS_BD=/env/bd"},
			args: []string{"--state-dir", "/s", "--log-level", "debug", "--taskmaster"},
			lines: []line{
				{"workflow.stop_hook.max_cycles", "20", "FILE"},
				{"workflow.epic", `"bd-x7y8"`, "env RUNTASKS_EPIC"},
				{"workflow.stuck_after", `"1h30m"`, "env RUNTASKS_WORKFLOW__STUCK_AFTER"},
				{"beads.bin", `"/env/bd"`, "env RUNTASKS_BD"},
				{"state.dir", `"/s"`, "flag --state-dir"},
				{"log.level", `"debug"`, "flag --log-level"},
				{"workflow.done_token.required", "true", "flag --taskmaster"},
				{"workflow.stop_hook.completion_promises", `["SHIPPED",{"condition":"always","text":"GIVING UP"}]`, "FILE"},
				{"beads.timeout", `"10s"`, "default"},
			},
			head: []string{"# project file: FILE",
				`#   "SHIPPED" -> all_complete`,
				`#   "GIVING UP" -> always (not in allow_exit_on: ignored)`},
		},
		{name: "checks as written, with their defaults",
			file: "workflow:\n  checks:\n    - beads\n    - {type: command, name: tests, run: make test}\n    - {type: composite, mode: any, checks: [promise, {type: files, paths: [R.md]}]}\n",
			lines: []line{{"workflow.checks",
				`["beads",{"name":"tests","run":"make test","tail_lines":20,"timeout":"10m","type":"command"},` +
					`{"checks":["promise",{"paths":["R.md"],"type":"files"}],"mode":"any","type":"composite"}]`, "FILE"}}},
		{name: "a list replaces the list below whole, layer by layer",
			file: "workflow:\n  stop_hook:\n    allow_exit_on: [always, all_blocked, all_complete]\nclaim:\n  patterns: ['^a (\\S+)$', '^b (\\S+)$']\n",
			env:  []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON=all_blocked"},
			lines: []line{
				{"workflow.stop_hook.allow_exit_on", `["all_blocked"]`, "env RUNTASKS_WORKFLOW__STOP_HOOK__ALLOW_EXIT_ON"},
				{"claim.patterns", `["^a (\\S+)$","^b (\\S+)$"]`, "FILE"},
				{"claim.arm_patterns", `["(?i)^\\s*/(?:runtasks:)?run-tasks\\s+(?P\u003cid\u003e[A-Za-z0-9][A-Za-z0-9_-]*-[A-Za-z0-9][A-Za-z0-9._-]*)\\b"]`, "default"},
			}},
		{name: "flag over env", env: []string{"RUNTASKS_EPIC=bd-env"}, args: []string{"--epic", "bd-flag", "--max-cycles=0"},
			lines: []line{{"workflow.epic", `"bd-flag"`, "flag --epic"}, {"workflow.stop_hook.max_cycles", "0", "flag --max-cycles"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := configProject(t, tt.file)
			f, out, errb := configFactory(dir, tt.env...)
			if code := Main(append([]string{"config", "show"}, tt.args...), f); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, errb)
			}
			file := filepath.Join(dir, "project.yaml")
			got := out.String()
			if !strings.HasPrefix(got, "# project root: "+dir+"\n") {
				t.Errorf("output does not start with the root:\n%s", got)
			}
			for _, h := range tt.head {
				if !strings.Contains(got, strings.ReplaceAll(h, "FILE", file)+"\n") {
					t.Errorf("output lacks %q:\n%s", h, got)
				}
			}
			for _, l := range tt.lines {
				if src := strings.ReplaceAll(l.source, "FILE", file); !configShowLine(l.key, l.value, src).MatchString(got) {
					t.Errorf("output lacks %s = %s  # %s:\n%s", l.key, l.value, src, got)
				}
			}
			for _, key := range config.ConfigKeys() {
				if n := len(regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(key)+` = `).FindAllString(got, -1)); n != 1 {
					t.Errorf("%s shown %d times, want once", key, n)
				}
			}
		})
	}
}

func TestConfigShowJSON(t *testing.T) {
	dir := configProject(t, "workflow:\n  stop_hook:\n    max_cycles: 12\n")
	f, out, errb := configFactory(filepath.Join(dir, "sub"), "RUNTASKS_LOG_FILE=x.log")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"config", "show", "--json"}, f); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb)
	}
	var got configShowJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	file := filepath.Join(dir, "project.yaml")
	if got.Root != dir || got.File != file {
		t.Errorf("root, file = %q, %q; want %q, %q", got.Root, got.File, dir, file)
	}
	if len(got.Keys) != len(config.ConfigKeys()) {
		t.Errorf("%d keys, want %d", len(got.Keys), len(config.ConfigKeys()))
	}
	want := map[string]configKeyJSON{
		"workflow.stop_hook.max_cycles": {Value: float64(12), Source: file},
		"log.file":                      {Value: "x.log", Source: "env RUNTASKS_LOG_FILE"},
		"workflow.stuck_after":          {Value: "2h", Source: "default"},
	}
	for _, k := range got.Keys {
		if w, ok := want[k.Key]; ok {
			if k.Value != w.Value || k.Source != w.Source {
				t.Errorf("%s = %v from %s; want %v from %s", k.Key, k.Value, k.Source, w.Value, w.Source)
			}
			delete(want, k.Key)
		}
	}
	if len(want) > 0 {
		t.Errorf("keys missing: %v", want)
	}
	if len(got.Promises) != 4 || got.Promises[2] != (config.Promise{Text: "BLOCKED - NEEDS USER", Condition: "all_blocked"}) {
		t.Errorf("promises = %v", got.Promises)
	}
}

func TestConfigShowErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  []string
		args []string
		want []string // stderr lines; FILE = the project.yaml
	}{
		{"misspelt key", "workflow:\n  stop_hook:\n    max_cycle: 5\n", nil, nil,
			[]string{"FILE:3: workflow.stop_hook.max_cycle: unknown key (did you mean max_cycles?)"}},
		{"unknown variable and bad file value", "log:\n  level: loud\n", []string{"RUNTASKS_EPC=x"}, nil,
			[]string{"runtasks: warning: env RUNTASKS_EPC: unknown variable, ignored (did you mean RUNTASKS_EPIC?)",
				`FILE:2: log.level: must be one of debug, info, warn, error, got "loud"`}},
		{"empty variable of a number", "", []string{"RUNTASKS_MAX_CYCLES="}, nil,
			[]string{`env RUNTASKS_MAX_CYCLES: workflow.stop_hook.max_cycles: expected an integer, got string ""`}},
		{"bad flag", "", nil, []string{"--max-cycles", "-1"},
			[]string{"flag --max-cycles: workflow.stop_hook.max_cycles: must be 0 or more, got -1"}},
		{"missing --config", "", nil, []string{"--config", "/nonexistent/p.yaml"},
			[]string{"runtasks: configuration file (--config): stat /nonexistent/p.yaml: no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := configProject(t, tt.file)
			f, out, errb := configFactory(dir, tt.env...)
			if code := Main(append([]string{"config", "show"}, tt.args...), f); code != 4 {
				t.Errorf("exit %d, want 4", code)
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty:\n%s", out)
			}
			want := strings.ReplaceAll(strings.Join(tt.want, "\n"), "FILE", filepath.Join(dir, "project.yaml")) + "\n"
			if errb.String() != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", errb, want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	const good = "workflow:\n  epic: bd-1\n"
	const bad = "workflow:\n  stop_hook:\n    max_cycle: 5\n    subagent_stop: never\n"
	tests := []struct {
		name    string
		files   map[string]string // relative to the temp dir
		wd      string            // relative to the temp dir
		env     []string          // TMP = the temp dir
		args    []string
		code    int
		out     string // TMP = the temp dir
		errOut  string
		errLike string // stderr contains
	}{
		{name: "file given", files: map[string]string{"p/.git/x": "", "p/ci.yaml": good}, wd: "p", args: []string{"ci.yaml"},
			out: "TMP/p/ci.yaml: ok\n"},
		{name: "absolute file given", files: map[string]string{"other/c.yaml": good, "p/.git/x": ""}, wd: "p", args: []string{"TMP/other/c.yaml"},
			out: "TMP/other/c.yaml: ok\n"},
		{name: "bad file given", files: map[string]string{"p/.git/x": "", "p/bad.yaml": bad}, wd: "p", args: []string{"bad.yaml"}, code: 4,
			errOut: "TMP/p/bad.yaml:3: workflow.stop_hook.max_cycle: unknown key (did you mean max_cycles?)\n" +
				`TMP/p/bad.yaml:4: workflow.stop_hook.subagent_stop: must be one of allow, drive, got "never"` + "\n"},
		{name: "next_ids the largest int", files: map[string]string{"p/.git/x": "", "p/n.yaml": "workflow:\n  stop_hook:\n    next_ids: 9223372036854775807\n"}, wd: "p", args: []string{"n.yaml"}, code: 4,
			errOut: "TMP/p/n.yaml:3: workflow.stop_hook.next_ids: must be at most 50, got 9223372036854775807\n"},
		{name: "next_ids 2^32", files: map[string]string{"p/.git/x": "", "p/n.yaml": "workflow:\n  stop_hook:\n    next_ids: 4294967296\n"}, wd: "p", args: []string{"n.yaml"}, code: 4,
			errOut: "TMP/p/n.yaml:3: workflow.stop_hook.next_ids: must be at most 50, got 4294967296\n"},
		{name: "bad check option", files: map[string]string{"p/.git/x": "", "p/c.yaml": "workflow:\n  checks:\n    - {type: command, run: make, timeout: 48h}\n"}, wd: "p", args: []string{"c.yaml"}, code: 4,
			errOut: "TMP/p/c.yaml:3: workflow.checks[0].timeout: must be at most 24h, got 48h\n"},
		{name: "yaml syntax error", files: map[string]string{"p/.git/x": "", "p/bad.yaml": "workflow: [\n"}, wd: "p", args: []string{"bad.yaml"}, code: 4,
			errLike: "TMP/p/bad.yaml: yaml: "},
		{name: "found walking up", files: map[string]string{"p/.git/x": "", "p/project.yaml": good, "p/a/b/x": ""}, wd: "p/a/b",
			out: "TMP/p/project.yaml: ok\n"},
		{name: "found and bad", files: map[string]string{"p/.beads/x": "", "p/project.yaml": bad}, wd: "p", code: 4,
			errLike: "TMP/p/project.yaml:3: workflow.stop_hook.max_cycle: unknown key"},
		{name: "--config", files: map[string]string{"p/.git/x": "", "p/project.yaml": bad, "p/ci/c.yaml": good}, wd: "p", args: []string{"--config", "ci/c.yaml"},
			out: "TMP/p/ci/c.yaml: ok\n"},
		{name: "RUNTASKS_CONFIG", files: map[string]string{"p/.git/x": "", "p/project.yaml": bad, "c.yaml": good}, wd: "p", env: []string{"RUNTASKS_CONFIG=TMP/c.yaml"},
			out: "TMP/c.yaml: ok\n"},
		{name: "an unknown variable is no error", files: map[string]string{"p/.git/x": "", "p/project.yaml": good}, wd: "p", env: []string{"RUNTASKS_BOGUS=1"},
			out: "TMP/p/project.yaml: ok\n"},
		{name: "an empty RUNTASKS_MAX_CYCLES names the variable", files: map[string]string{"p/.git/x": "", "p/project.yaml": good}, wd: "p", env: []string{"RUNTASKS_MAX_CYCLES="}, code: 4,
			errOut: `env RUNTASKS_MAX_CYCLES: workflow.stop_hook.max_cycles: expected an integer, got string ""` + "\n"},
		{name: "the file's problems, then the environment's (types, then values)", files: map[string]string{"p/.git/x": "", "p/bad.yaml": bad}, wd: "p", args: []string{"bad.yaml"},
			env: []string{"RUNTASKS_WORKFLOW__STUCK_AFTER=soon", "TASKMASTER_MAX=-1"}, code: 4,
			errOut: "TMP/p/bad.yaml:3: workflow.stop_hook.max_cycle: unknown key (did you mean max_cycles?)\n" +
				`TMP/p/bad.yaml:4: workflow.stop_hook.subagent_stop: must be one of allow, drive, got "never"` + "\n" +
				`env RUNTASKS_WORKFLOW__STUCK_AFTER: workflow.stuck_after: expected a duration such as "90s" or "2h", got string "soon"` + "\n" +
				"env TASKMASTER_MAX: workflow.done_token.max: must be 0 or more, got -1\n"},
		{name: "none found", files: map[string]string{"p/.git/x": ""}, wd: "p", code: 4,
			errOut: "runtasks: no project.yaml in the project root TMP/p (name a file: runtasks config validate FILE)\n"},
		{name: "missing file", files: map[string]string{"p/.git/x": ""}, wd: "p", args: []string{"nope.yaml"}, code: 4,
			errOut: "runtasks: open TMP/p/nope.yaml: no such file or directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			for name, body := range tt.files {
				configWriteFile(t, filepath.Join(tmp, name), body)
			}
			sub := func(s string) string { return strings.ReplaceAll(s, "TMP", tmp) }
			var env, args []string
			for _, e := range tt.env {
				env = append(env, sub(e))
			}
			for _, a := range tt.args {
				args = append(args, sub(a))
			}
			f, out, errb := configFactory(filepath.Join(tmp, tt.wd), env...)
			if code := Main(append([]string{"config", "validate"}, args...), f); code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, errb)
			}
			if out.String() != sub(tt.out) {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, sub(tt.out))
			}
			if tt.errLike != "" {
				if !strings.Contains(errb.String(), sub(tt.errLike)) {
					t.Errorf("stderr:\n%s\nwant it to contain %q", errb, sub(tt.errLike))
				}
			} else if errb.String() != sub(tt.errOut) {
				t.Errorf("stderr:\n%s\nwant:\n%s", errb, sub(tt.errOut))
			}
		})
	}
}

func TestConfigValidateExample(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	f, out, errb := configFactory(wd)
	if code := Main([]string{"config", "validate", "../../project.yaml.example"}, f); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb)
	}
	if want := filepath.Join(wd, "../../project.yaml.example") + ": ok\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
}

func TestConfigHelpHasExamples(t *testing.T) {
	for _, cmd := range [][]string{{"config", "show"}, {"config", "validate"}} {
		f, out, _ := configFactory(t.TempDir())
		if code := Main(append(cmd, "--help"), f); code != 0 {
			t.Fatalf("%v --help: exit %d", cmd, code)
		}
		if !strings.Contains(out.String(), "Examples:\n  runtasks "+strings.Join(cmd, " ")) {
			t.Errorf("%v --help has no examples:\n%s", cmd, out)
		}
	}
}
