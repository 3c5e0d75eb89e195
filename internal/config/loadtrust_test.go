package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/trust"
)

// fakeTrust trusts the content it holds for each root.
type fakeTrust struct {
	trusted map[string]string // root -> content
	err     error
}

func (f fakeTrust) Check(root string, content []byte) (trust.State, error) {
	if f.err != nil {
		return trust.Untrusted, f.err
	}
	c, ok := f.trusted[root]
	switch {
	case !ok:
		return trust.Untrusted, nil
	case c != string(content):
		return trust.Changed, nil
	}
	return trust.Trusted, nil
}

// RequireTrust: a project.yaml the store does not trust as it is now is
// left out whole (its commands, beads.bin, prompts, templates, log file);
// the environment and flags still apply; a file named explicitly is read.
func TestLoadRequireTrust(t *testing.T) {
	const body = "workflow:\n  epic: file-e\n  checks:\n    - {type: command, run: \"touch PWNED\"}\nbeads:\n  bin: ./x.sh\nprompts:\n  run_tasks: evil.md\nclaim:\n  templates: tmpl\nlog:\n  file: /tmp/log\n"
	tests := []struct {
		name      string
		store     fakeTrust
		env       []string
		config    bool // --config names the file
		wantRead  bool
		wantState trust.State
		wantErr   string
	}{
		{name: "never trusted", store: fakeTrust{}, wantState: trust.Untrusted},
		{name: "trusted as it is", store: fakeTrust{trusted: map[string]string{"ROOT": body}}, wantRead: true},
		{name: "changed since trusted", store: fakeTrust{trusted: map[string]string{"ROOT": "workflow:\n  epic: old\n"}}, wantState: trust.Changed},
		{name: "another root trusted", store: fakeTrust{trusted: map[string]string{"/elsewhere": body}}, wantState: trust.Untrusted},
		{name: "a store that cannot be read trusts nothing", store: fakeTrust{err: errors.New("permission denied")}, wantState: trust.Untrusted, wantErr: "permission denied"},
		{name: "--config is the user's choice", store: fakeTrust{}, config: true, wantRead: true},
		{name: "RUNTASKS_CONFIG is the user's choice", store: fakeTrust{}, env: []string{"RUNTASKS_CONFIG=ROOT/project.yaml"}, wantRead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := cfgProject(t, body)
			for k, v := range tt.store.trusted {
				delete(tt.store.trusted, k)
				tt.store.trusted[strings.ReplaceAll(k, "ROOT", root)] = v
			}
			env := []string{"RUNTASKS_BD=/usr/bin/bd-of-the-user"}
			for _, e := range tt.env {
				env = append(env, strings.ReplaceAll(e, "ROOT", root))
			}
			opts := LoadOptions{StartDir: root, Environ: env, RequireTrust: tt.store.Check}
			if tt.config {
				opts.ConfigFile = filepath.Join(root, ProjectFile)
			}
			cfg, src, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Beads.Bin != "/usr/bin/bd-of-the-user" || (*src)["beads.bin"] != "env RUNTASKS_BD" {
				t.Errorf("beads.bin = %q from %q, want the environment's", cfg.Beads.Bin, (*src)["beads.bin"])
			}
			if tt.wantRead {
				if cfg.Untrusted != nil || cfg.File == "" || cfg.Workflow.Epic != "file-e" {
					t.Errorf("file not read: untrusted %+v, file %q, epic %q", cfg.Untrusted, cfg.File, cfg.Workflow.Epic)
				}
				return
			}
			if cfg.File != "" || cfg.Untrusted == nil {
				t.Fatalf("file read without trust: file %q, untrusted %+v", cfg.File, cfg.Untrusted)
			}
			if cfg.Untrusted.State != tt.wantState || cfg.Untrusted.Root != root || !strings.Contains(cfg.Untrusted.Err, tt.wantErr) {
				t.Errorf("Untrusted = %+v, want state %v, root %s, err %q", cfg.Untrusted, tt.wantState, root, tt.wantErr)
			}
			def := cfgDefaults(root)
			def.Beads.Bin = "/usr/bin/bd-of-the-user"
			if cfg.Workflow.Epic != "" || len(cfg.Workflow.Checks) != 0 || cfg.Prompts.RunTasks != "" || cfg.Claim.Templates != "" || cfg.Log.File != "" {
				t.Errorf("an untrusted value took effect: %+v", cfg)
			}
			for _, key := range ConfigKeys() {
				if (*src)[key] != SourceDefault && key != "beads.bin" {
					t.Errorf("%s from %s, want the default", key, (*src)[key])
				}
			}
			got, _ := cfg.Value("workflow.checks")
			want, _ := def.Value("workflow.checks")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("workflow.checks = %v", got)
			}
			msg := cfg.Untrusted.Message()
			if !strings.Contains(msg, "runtasks trust "+root) || !strings.Contains(msg, filepath.Join(root, ProjectFile)) {
				t.Errorf("message %q does not name the file and `runtasks trust %s`", msg, root)
			}
		})
	}
}

// The environment is the user's own: with the file left out, its
// variables still set checks and beads.bin.
func TestLoadRequireTrustEnvironmentApplies(t *testing.T) {
	root := cfgProject(t, "workflow:\n  checks: [beads]\n")
	cfg, _, err := Load(LoadOptions{StartDir: root, RequireTrust: fakeTrust{}.Check,
		Environ: []string{"RUNTASKS_WORKFLOW__CHECKS=beads,promise", "RUNTASKS_EPIC=env-e"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Untrusted == nil || len(cfg.Workflow.Checks) != 2 || cfg.Workflow.Epic != "env-e" {
		t.Errorf("untrusted %v, checkers %d, epic %q", cfg.Untrusted, len(cfg.Workflow.Checks), cfg.Workflow.Epic)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/src/app": "/home/me/src/app",
		"/tmp/my app":      "'/tmp/my app'",
		"/tmp/it's":        `'/tmp/it'\''s'`,
		"":                 "''",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestOwnFiles(t *testing.T) {
	tests := []struct {
		name  string
		set   func(c *Config)
		paths []string
		want  []string
	}{
		{"state dir, runs, worktrees", nil,
			[]string{".runtasks/", ".runtasks/decisions.jsonl", "runs/", "runs/t-1/RESULTS.md", ".worktrees/", ".worktrees/agent-x/", "src/main.go", ".runtasksx", "runs.txt"},
			[]string{"src/main.go", ".runtasksx", "runs.txt"}},
		{"a state dir elsewhere", func(c *Config) { c.State.Dir = "var/rt" }, []string{".runtasks/", "var/rt/", "var/x"}, []string{".runtasks/", "var/x"}},
		{"state.dir . owns nothing", func(c *Config) { c.State.Dir = "." }, []string{"a.go", "decisions.jsonl"}, []string{"a.go", "decisions.jsonl"}},
		{"a worktree pattern without a directory", func(c *Config) { c.Workflow.Worktrees.Pattern = "wt-{id}" }, []string{"wt-1/", ".worktrees/"}, []string{"wt-1/", ".worktrees/"}},
		{"a worktree pattern at the root owns nothing", func(c *Config) { c.Workflow.Worktrees.Pattern = "./{id}" }, []string{"a/"}, []string{"a/"}},
		{"clean", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfgDefaults(t.TempDir())
			if tt.set != nil {
				tt.set(&c)
			}
			got := c.OwnFiles(tt.paths)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("OwnFiles = %q, want %q", got, tt.want)
			}
		})
	}
}
