package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/install"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/trust"
	"github.com/runtasks/runtasks/internal/usage"
)

// files is a file system of settings files, by path.
type files map[string]string

func (fs files) read(path string) ([]byte, error) {
	if s, ok := fs[path]; ok && path != "" {
		if s == "unreadable" {
			return nil, os.ErrPermission
		}
		return []byte(s), nil
	}
	return nil, os.ErrNotExist
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// fakeBeads answers Show from issues (an unknown id is not found) and
// Server with server; err fails every call.
type fakeBeads struct {
	issues map[string]beads.Issue
	server beads.ServerStatus
	err    error
}

func (b fakeBeads) Version(context.Context) (string, error) { return TestedBD, b.err }

func (b fakeBeads) Server(context.Context) (beads.ServerStatus, error) { return b.server, b.err }

func (b fakeBeads) Show(_ context.Context, id string) (beads.Issue, error) {
	if b.err != nil {
		return beads.Issue{}, b.err
	}
	is, ok := b.issues[id]
	if !ok {
		return is, &beads.Error{Kind: beads.KindNotFound, Msg: "no issue found"}
	}
	return is, nil
}

func TestFindingString(t *testing.T) {
	for _, tt := range []struct {
		f    Finding
		want string
	}{
		{Finding{OK, "bd", "bd 1.3.0 at /bin/bd", "ignored when ok"}, "ok      bd        bd 1.3.0 at /bin/bd"},
		{Finding{Error, "store", "no .beads", "bd init"}, "error   store     no .beads — fix: bd init"},
		{Finding{Warning, "block-cap", "unset", ""}, "warning block-cap unset"},
	} {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestCheckServer(t *testing.T) {
	up := beads.ServerStatus{Mode: beads.ModeServer, Answers: true, Host: "db", Port: 3307, Database: "sc", User: "root", TLS: true}
	down := up
	down.Answers = false
	for _, tt := range []struct {
		name  string
		bd    fakeBeads
		ready bool
		level string
		msg   string
	}{
		{"not ready", fakeBeads{}, false, Warning, "not checked (bd or the store is missing)"},
		{"embedded", fakeBeads{server: beads.ServerStatus{Mode: beads.ModeEmbedded}}, true, OK, "embedded store"},
		{"server answers", fakeBeads{server: up}, true, OK, "server mode: Dolt SQL server db:3307, database sc, user root, TLS: answers"},
		{"server down", fakeBeads{server: down}, true, Error, "does not answer"},
		{"bd fails", fakeBeads{err: errors.New("bd:\n  broken")}, true, Error, "bd dolt show: bd: broken"},
	} {
		f := checkServer(context.Background(), tt.bd, tt.ready)
		if f.Level != tt.level || !strings.Contains(f.Msg, tt.msg) {
			t.Errorf("%s: %+v; want %s %q", tt.name, f, tt.level, tt.msg)
		}
	}
}

func TestCheckEpics(t *testing.T) {
	bd := fakeBeads{issues: map[string]beads.Issue{
		"bd-e": {ID: "bd-e", Title: "Ship", Status: "open"},
		"bd-c": {ID: "bd-c", Title: "Done", Status: "closed"},
	}}
	hooked := func(agent, epic string) map[string]agentSettings {
		return map[string]agentSettings{agent: {entries: []fileEntry{{Entry: install.Entry{Program: "runtasks", Epic: epic}}}}}
	}
	for _, tt := range []struct {
		name     string
		bd       fakeBeads
		epic     string
		settings map[string]agentSettings
		ready    bool
		want     []string // level and message of each finding
	}{
		{"configured", bd, "bd-e", nil, true, []string{`ok bd-e "Ship" (open)`}},
		{"closed", bd, "bd-c", nil, true, []string{`warning bd-c "Done" is closed: every stop will be allowed`}},
		{"unknown", bd, "bd-x", nil, true, []string{"error bd-x does not exist in the store"}},
		{"bd fails", fakeBeads{err: errors.New("down")}, "bd-e", nil, true, []string{"error bd-e: store not readable: down"}},
		{"not ready", bd, "bd-e", nil, false, []string{"warning bd-e: not checked (bd or the store is missing)"}},
		{"none anywhere", bd, "", nil, true, []string{"ok none configured"}},
		{"from the hooks", bd, "", hooked(hook.Codex, "bd-x"), true, []string{"error bd-x does not exist in the store, passed by the codex hooks' --epic"}},
		{"the configuration wins", bd, "bd-e", hooked(hook.Codex, "bd-x"), true, []string{`ok bd-e "Ship" (open)`}},
	} {
		fs := checkEpics(context.Background(), tt.bd, tt.epic, tt.settings, tt.ready)
		var got []string
		for _, f := range fs {
			got = append(got, f.Level+" "+f.Msg)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tt.want[i]) {
				t.Errorf("%s: %q, want %q…", tt.name, got[i], tt.want[i])
			}
		}
	}
}

func TestCheckBlockCap(t *testing.T) {
	claude := func(env string) files {
		return files{"/p/.claude/settings.json": `{"env":{"` + EnvBlockCap + `":` + env + `}}`}
	}
	// A Claude Code settings file with runtasks' stop hook: Claude Code is installed.
	hooked := files{"/p/.claude/settings.json": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"runtasks stop-hook --agent claude"}]}]}}`}
	for _, tt := range []struct {
		name      string
		env       string // the variable in the environment
		fs        files
		maxCycles int
		level     string
		msg       string
	}{
		{"unset, no Claude", "", nil, 50, OK, "unset (Claude Code not installed)"},
		{"unset, Claude", "", hooked, 50, Warning, "unset: Claude Code (2.1.143+) ends a turn after 8 blocks"},
		{"environment", "60", nil, 50, OK, EnvBlockCap + "=60 (environment), max_cycles 50"},
		{"below max_cycles", "20", nil, 50, Warning, "=20 (environment) is below max_cycles 50"},
		{"off", "0", nil, 50, OK, "=0 (environment): off; max_cycles 50 caps the loop"},
		{"nothing caps", "0", nil, 0, Warning, "nothing caps the loop"},
		{"not a number", "many", nil, 50, Warning, `="many" (environment) is not a number`},
		{"settings env", "", claude("70"), 50, OK, "=70 (/p/.claude/settings.json)"},
		{"settings string", "", claude(`"70"`), 50, OK, "=70 (/p/.claude/settings.json)"},
		{"environment first", "80", claude("70"), 50, OK, "=80 (environment)"},
	} {
		in := &Inputs{Root: "/p", Home: "/h", ReadFile: tt.fs.read, Environ: []string{EnvBlockCap + "=" + tt.env}}
		cfg := &config.Config{}
		cfg.Workflow.StopHook.MaxCycles = tt.maxCycles
		f := checkBlockCap(in, cfg, readSettings(in, hook.Claude))
		if f.Level != tt.level || !strings.Contains(f.Msg, tt.msg) {
			t.Errorf("%s: %+v; want %s %q", tt.name, f, tt.level, tt.msg)
		}
	}
}

func TestCheckAgent(t *testing.T) {
	// Install matches a hook by its program's name: runtasks.
	dir := t.TempDir()
	self := filepath.Join(dir, "self", "runtasks")
	script := filepath.Join(dir, "script", "runtasks")
	plain := filepath.Join(dir, "plain", "runtasks")
	gone := filepath.Join(dir, "gone", "runtasks")
	for p, mode := range map[string]os.FileMode{self: 0o755, script: 0o755, plain: 0o644} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	stop := func(program string) string {
		return `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"` + program + ` stop-hook --agent claude"}]}]}}`
	}
	project, user := "/p/.claude/settings.json", "/h/.claude/settings.json"
	for _, tt := range []struct {
		name  string
		fs    files
		level string
		n     int
		msg   string
	}{
		{"not installed", nil, OK, 0, "not installed"},
		{"this binary", files{project: stop(self)}, OK, 1, "installed: " + project + " (1), running this runtasks"},
		{"both files", files{project: stop(self), user: stop(self)}, OK, 2, project + " (1), " + user + " (1)"},
		{"missing", files{project: stop(gone)}, Error, 1, "the hooks do not run this runtasks: " + gone + " is missing"},
		{"not on PATH", files{project: stop("runtasks")}, Error, 1, "runtasks is not found on PATH"},
		{"a script", files{project: stop(script)}, Error, 1, script + " is not runtasks (not a Go program)"},
		{"not executable", files{project: stop(plain)}, Error, 1, plain + " is not an executable file"},
		{"invalid JSON", files{project: `{"hooks":`}, Error, 0, project + " is not valid JSON"},
		{"a comment", files{project: "// mine\n" + stop(self)}, Error, 1, project + " is not valid JSON: comments or trailing commas"},
		{"unreadable", files{project: "unreadable", user: stop(self)}, Error, 0, "permission denied"},
	} {
		in := &Inputs{Root: "/p", Home: "/h", Executable: self, ReadFile: tt.fs.read, LookPath: func(string) string { return "" }}
		s := readSettings(in, hook.Claude)
		f, n := checkAgent(in, hook.Claude, s), len(s.entries)
		if f.Level != tt.level || n != tt.n || !strings.Contains(f.Msg, tt.msg) {
			t.Errorf("%s: %+v, %d; want %s, %d, %q", tt.name, f, n, tt.level, tt.n, tt.msg)
		}
	}
}

func TestCheckTrust(t *testing.T) {
	root := t.TempDir()
	empty := t.TempDir()
	file := filepath.Join(root, config.ProjectFile)
	if err := os.WriteFile(file, []byte("beads:\n  bin: ./evilbd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := func(st trust.State, err error) func(string, string) (trust.State, error) {
		return func(string, string) (trust.State, error) { return st, err }
	}
	for _, tt := range []struct {
		name   string
		root   string
		env    string // RUNTASKS_CONFIG
		state  func(string, string) (trust.State, error)
		level  string
		msg    string
		fixHas string
	}{
		{"named by the environment", root, "/ci/project.yaml", nil, OK, config.EnvConfig + " names /ci/project.yaml", ""},
		{"no project.yaml", empty, "", nil, OK, "nothing to trust", ""},
		{"no trust store", root, "", nil, Warning, "no trust store (no HOME): the hooks ignore " + file, "XDG_CONFIG_HOME"},
		{"trusted", root, "", state(trust.Trusted, nil), OK, root + " is trusted", ""},
		{"untrusted", root, "", state(trust.Untrusted, nil), Warning, file + " is untrusted: the hooks and doctor ignore it (defaults, environment and flags only); trusted, it would make runtasks run or use: beads.bin: ./evilbd", "runtasks trust"},
		{"changed", root, "", state(trust.Changed, nil), Warning, "is changed since trusted", "runtasks trust"},
		{"unreadable", root, "", state(trust.Untrusted, errors.New("bad record")), Warning, "bad record: runtasks ignores", "review"},
	} {
		in := &Inputs{Root: tt.root, TrustState: tt.state, TrustErr: errors.New("no HOME"), ReadFile: os.ReadFile,
			Environ: []string{config.EnvConfig + "=" + tt.env}}
		f := checkTrust(in)
		if f.Level != tt.level || !strings.Contains(f.Msg, tt.msg) || !strings.Contains(f.Fix, tt.fixHas) {
			t.Errorf("%s: %+v; want %s %q, fix with %q", tt.name, f, tt.level, tt.msg, tt.fixHas)
		}
	}
}

// TestCheckDoubleStop: two runtasks stop hooks that both fire at one stop
// are an error; Claude Code runs one command string of several files once.
func TestCheckDoubleStop(t *testing.T) {
	stop := func(cmds ...string) string {
		var groups []string
		for _, c := range cmds {
			groups = append(groups, `{"hooks":[{"type":"command","command":"`+c+`"}]}`)
		}
		return `{"hooks":{"Stop":[` + strings.Join(groups, ",") + `]}}`
	}
	project, user := "/p/.claude/settings.json", "/h/.claude/settings.json"
	for _, tt := range []struct {
		name string
		fs   files
		want string // "" = no finding
		fix  string
	}{
		{"one", files{project: stop("runtasks stop-hook --agent claude")}, "", ""},
		{"the same string twice", files{project: stop("runtasks stop-hook --agent claude"), user: stop("runtasks stop-hook --agent claude")}, "", ""},
		{"project and user", files{project: stop("runtasks stop-hook --agent claude"), user: stop("/opt/rt/runtasks stop-hook --agent claude")}, "2 runtasks stop hooks fire at each stop", "runtasks uninstall claude --global"},
		{"two in the project", files{project: stop("runtasks stop-hook --agent claude", "/home/a/bin/runtasks stop-hook --agent claude --epic e")}, "2 runtasks stop hooks fire", "runtasks install claude (keeps one set"},
	} {
		in := &Inputs{Root: "/p", Home: "/h", ReadFile: tt.fs.read}
		f := only(t, checkDoubleStop(hook.Claude, readSettings(in, hook.Claude)))
		switch {
		case tt.want == "" && f != nil:
			t.Errorf("%s: %+v, want none", tt.name, f)
		case tt.want != "" && (f == nil || f.Level != Error || !strings.Contains(f.Msg, tt.want) || !strings.Contains(f.Fix, tt.fix)):
			t.Errorf("%s: %+v, want an error %q with fix %q", tt.name, f, tt.want, tt.fix)
		}
	}
}

// TestCheckFires: Claude Code started below the project root runs none of
// the root's hooks; at the root, or with hooks for every directory (the
// user's settings), they fire.
func TestCheckFires(t *testing.T) {
	stop := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"runtasks stop-hook --agent claude"}]}]}}`
	project, user := "/p/.claude/settings.json", "/h/.claude/settings.json"
	for _, tt := range []struct {
		name, wd string
		fs       files
		fires    bool
	}{
		{"at the root", "/p", files{project: stop}, true},
		{"below the root", "/p/sub", files{project: stop}, false},
		{"below, with the user's hooks", "/p/sub", files{project: stop, user: stop}, true},
		{"below, with hooks there too", "/p/sub", files{project: stop, "/p/sub/.claude/settings.json": stop}, true},
	} {
		in := &Inputs{Root: "/p", Wd: tt.wd, Home: "/h", ReadFile: tt.fs.read}
		f := only(t, checkFires(in, hook.Claude, readSettings(in, hook.Claude)))
		if (f == nil) != tt.fires {
			t.Errorf("%s: %+v", tt.name, f)
		}
		if f != nil && (f.Level != Error || !strings.Contains(f.Msg, "Claude Code started here (/p/sub) reads /p/sub/.claude/settings.json") || !strings.Contains(f.Fix, "cd /p")) {
			t.Errorf("%s: %+v", tt.name, f)
		}
	}
}

// TestConfigErrorNamesTheVariable: a variable that makes the
// configuration invalid is named, with a fix that removes it.
func TestConfigErrorNamesTheVariable(t *testing.T) {
	_, _, err := config.Load(config.LoadOptions{StartDir: t.TempDir(), Environ: []string{"RUNTASKS_MAX_CYCLES=lots"}})
	if err == nil {
		t.Fatal("RUNTASKS_MAX_CYCLES=lots loaded")
	}
	f := configError(err)
	if f.Level != Error || !strings.Contains(f.Msg, "the environment makes the configuration invalid (RUNTASKS_MAX_CYCLES)") || !strings.HasPrefix(f.Fix, "unset RUNTASKS_MAX_CYCLES") {
		t.Errorf("%+v", f)
	}
	cfg, src, err := config.Load(config.LoadOptions{StartDir: t.TempDir(), Environ: []string{"RUNTASKS_WORKFLOW__STOP_HOOK__ENABLED=false"}})
	if err != nil {
		t.Fatal(err)
	}
	f = checkConfig(&Inputs{Cfg: cfg, Src: src})
	if f.Level != Error || !strings.Contains(f.Msg, "env RUNTASKS_WORKFLOW__STOP_HOOK__ENABLED") || f.Fix != "unset RUNTASKS_WORKFLOW__STOP_HOOK__ENABLED in the shell the agent starts from" {
		t.Errorf("switched off by the environment: %+v", f)
	}
}

// A model the loops used without a price is one warning naming it.
func TestCheckPrices(t *testing.T) {
	cfg := config.Defaults()
	cfg.Root = t.TempDir()
	if f := only(t, checkPrices(&cfg)); f != nil {
		t.Errorf("no state: %v", f)
	}
	store := &state.Store{Dir: cfg.StateDir()}
	for _, s := range []string{"s1", "s2"} {
		if _, err := store.Update(s, "bd-e", func(st *state.State) error {
			st.Spent = usage.Spent{Models: []string{"claude-opus-5-5", "fake-model"}, Unpriced: 10}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	f := only(t, checkPrices(&cfg))
	if f == nil || f.Level != Warning || !strings.Contains(f.Msg, "no price for fake-model:") || strings.Contains(f.Msg, "opus") {
		t.Errorf("got %v; want one warning naming fake-model alone", f)
	}
	cfg.Usage.Prices = []usage.Price{{Model: "fake-*"}}
	if f := only(t, checkPrices(&cfg)); f != nil {
		t.Errorf("priced by the project: %v", f)
	}
}

// only is the one finding of fs, nil for none.
func only(t *testing.T, fs []Finding) *Finding {
	t.Helper()
	if len(fs) > 1 {
		t.Fatalf("%d findings, want at most one: %v", len(fs), fs)
	}
	if len(fs) == 0 {
		return nil
	}
	return &fs[0]
}
