package install

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks"
	"github.com/runtasks/runtasks/hook"
	"github.com/runtasks/runtasks/prompts"
)

const exe = "/opt/rt/bin/runtasks"

// seeds are settings files that already hold other hooks and keys, one
// per agent, in each agent's own shape.
var seeds = map[string]string{
	hook.Claude: `{
  "model": "opus",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "say done"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "lint-bash"
          }
        ]
      }
    ]
  },
  "env": {
    "A": "1"
  }
}
`,
	hook.Codex: `{
  "description": "team hooks",
  "hooks": {
    "SessionStart": [
      {
        "matcher": "^startup$",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/greet",
            "timeout": 5
          }
        ]
      }
    ]
  }
}
`,
	hook.Gemini: `{
  "general": {
    "vimMode": true
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [
          {
            "name": "secret-scanner",
            "type": "command",
            "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/scan.sh",
            "timeout": 5000
          }
        ]
      }
    ],
    "disabled": [
      "auto-test"
    ]
  }
}
`,
	hook.Cursor: `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [
      {
        "command": "./hooks/format.sh"
      }
    ],
    "stop": [
      {
        "command": "./hooks/audit.sh"
      }
    ]
  }
}
`,
}

func opts(t *testing.T, agent string) Options {
	t.Helper()
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	home := filepath.Join(dir, "home")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	return Options{Agent: agent, ProjectDir: proj, Home: home, Executable: exe, LoopLimit: 50,
		Now: func() time.Time { n++; return time.Date(2026, 11, 22, 10, 0, n, 0, time.UTC) }}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	m, _ := filepath.Glob(path + ".runtasks-*.bak")
	return m
}

func TestInstallRoundTrip(t *testing.T) {
	for _, agent := range hook.Agents {
		t.Run(agent, func(t *testing.T) {
			o := opts(t, agent)
			o.Epic = "bd-x7y8"
			settings, _ := SettingsPath(o)
			if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
				t.Fatal(err)
			}
			seed := []byte(seeds[agent])
			if err := os.WriteFile(settings, seed, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()

			res, err := Install(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			first := read(t, settings)
			if res.Files[0].Action != Updated || res.Files[0].Backup == "" || !bytes.Equal(read(t, res.Files[0].Backup), seed) {
				t.Fatalf("settings change: %+v", res.Files[0])
			}
			if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
			}
			entries, err := Entries(agent, first)
			if err != nil {
				t.Fatal(err)
			}
			events := map[string]int{}
			for _, e := range entries {
				events[e.Event]++
				if e.Program != exe {
					t.Errorf("entry %q does not run %s", e.Command, exe)
				}
			}
			for _, ev := range specs[agent].events {
				if n := events[hook.NativeEvent(agent, ev.event)]; n != 1 {
					t.Errorf("%s: %d runtasks entries, want 1", ev.event, n)
				}
			}
			if !strings.Contains(string(first), exe+" stop-hook --agent "+agent+" --epic bd-x7y8") {
				t.Errorf("stop command missing:\n%s", first)
			}
			// Every other hook and key is still there.
			seedDoc, _ := decodeObject(seed)
			doc, _ := decodeObject(first)
			if err := merge(o, doc, true); err != nil {
				t.Fatal(err)
			}
			if !equalValues(doc, seedDoc) {
				t.Errorf("install lost or changed something:\n%s", encode(doc))
			}
			if agent == hook.Codex {
				top, _ := decodeObject(first)
				for _, k := range top.keys {
					if k != "hooks" && k != "description" {
						t.Errorf("Codex's hooks.json accepts only description and hooks, got %q", k)
					}
				}
			}
			for _, name := range []string{"completion-checklist"} {
				want, _ := prompts.Read("skills/" + name + "/SKILL.md")
				if got := read(t, skillPath(o, name)); string(got) != want {
					t.Errorf("skill %s not written", name)
				}
			}
			if got := read(t, filepath.Join(o.ProjectDir, "project.yaml")); !bytes.Equal(got, runtasks.ProjectYAMLExample) {
				t.Error("project.yaml not written")
			}

			// Twice changes nothing: same bytes, no new backup.
			res, err = Install(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Changed() || !bytes.Equal(read(t, settings), first) || len(backups(t, settings)) != 1 {
				t.Fatalf("second install changed something: %+v", res.Files)
			}

			// Uninstall gives the seed back, byte for byte.
			res, err = Uninstall(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, settings); !bytes.Equal(got, seed) {
				t.Errorf("uninstall left:\n%s\nwant:\n%s", got, seed)
			}
			if _, err := os.Stat(skillPath(o, "completion-checklist")); !os.IsNotExist(err) {
				t.Error("skill left behind")
			}
			if _, err := os.Stat(filepath.Join(o.ProjectDir, "project.yaml")); !os.IsNotExist(err) {
				t.Error("unchanged project.yaml left behind")
			}
			if res, _ := Uninstall(ctx, o); res.Changed() {
				t.Errorf("second uninstall changed something: %+v", res.Files)
			}
		})
	}
}

// A file install created is removed again; a project.yaml the user edited
// stays.
func TestInstallIntoEmptyProject(t *testing.T) {
	for _, agent := range hook.Agents {
		o := opts(t, agent)
		ctx := context.Background()
		res, err := Install(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		settings := res.Settings
		if res.Files[0].Action != Created || res.Files[0].Backup != "" {
			t.Errorf("%s: %+v", agent, res.Files[0])
		}
		if agent == hook.Cursor && !strings.HasPrefix(string(read(t, settings)), "{\n  \"version\": 1,\n  \"hooks\": {\n    \"stop\": [\n      {\n        \"command\": \""+exe+" stop-hook --agent cursor\",\n        \"loop_limit\": 50\n") {
			t.Errorf("cursor hooks.json:\n%s", read(t, settings))
		}
		yaml := filepath.Join(o.ProjectDir, "project.yaml")
		os.WriteFile(yaml, []byte("workflow:\n  epic: bd-1\n"), 0o644)
		if _, err := Uninstall(ctx, o); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(settings); !os.IsNotExist(err) {
			t.Errorf("%s: %s left behind: %s", agent, settings, read(t, settings))
		}
		if _, err := os.Stat(yaml); err != nil {
			t.Errorf("%s: edited project.yaml removed", agent)
		}
	}
}

func TestInstallReplacesOlderEntry(t *testing.T) {
	o := opts(t, hook.Claude)
	settings, _ := SettingsPath(o)
	os.MkdirAll(filepath.Dir(settings), 0o755)
	old := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"before"},{"type":"command","command":"runtasks stop-hook --epic bd-old","timeout":30},{"type":"command","command":"after"}]},{"hooks":[{"type":"command","command":"'/old path/runtasks' stop-hook"}]}]}}`
	os.WriteFile(settings, []byte(old), 0o644)
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	doc, _ := decodeObject(read(t, settings))
	stop := doc.vals["hooks"].(*object).vals["Stop"].([]any)
	if len(stop) != 1 {
		t.Fatalf("Stop groups: %s", encode(stop))
	}
	var cmds []string
	for _, h := range stop[0].(*object).vals["hooks"].([]any) {
		cmds = append(cmds, h.(*object).vals["command"].(string))
	}
	if strings.Join(cmds, "|") != "before|"+exe+" stop-hook --agent claude|after" {
		t.Errorf("commands: %q", cmds)
	}
}

func TestInstallLeavesBadSettingsAlone(t *testing.T) {
	o := opts(t, hook.Gemini)
	settings, _ := SettingsPath(o)
	os.MkdirAll(filepath.Dir(settings), 0o755)
	for _, bad := range []string{`{"hooks": [1]}`, `{"hooks": {`, `[]`} {
		os.WriteFile(settings, []byte(bad), 0o644)
		if _, err := Install(context.Background(), o); err == nil || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("%s: err %v", bad, err)
		}
		if got := string(read(t, settings)); got != bad || len(backups(t, settings)) != 0 {
			t.Errorf("%s: file now %s", bad, got)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	o := opts(t, hook.Claude)
	o.DryRun = true
	res, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Files[0].Diff, "+            \"command\": \""+exe+" stop-hook --agent claude\",") || !strings.HasPrefix(res.Files[0].Diff, "--- /dev/null\n+++ b/") {
		t.Errorf("diff:\n%s", res.Files[0].Diff)
	}
	entries, _ := os.ReadDir(o.ProjectDir)
	if len(entries) != 0 {
		t.Errorf("dry run wrote %v", entries)
	}
}

func TestGlobalPaths(t *testing.T) {
	o := opts(t, hook.Codex)
	o.Global = true
	p, _ := SettingsPath(o)
	if p != filepath.Join(o.Home, ".codex", "hooks.json") {
		t.Error(p)
	}
	o.CodexHome = "/ch"
	if p, _ := SettingsPath(o); p != "/ch/hooks.json" {
		t.Error(p)
	}
	o.Agent = hook.Claude
	if p, _ := SettingsPath(o); p != filepath.Join(o.Home, ".claude", "settings.json") {
		t.Error(p)
	}
	if _, err := Install(context.Background(), Options{Agent: "vim"}); err == nil {
		t.Error("unknown agent accepted")
	}
	if _, err := Install(context.Background(), Options{Agent: hook.Claude, Executable: "runtasks", ProjectDir: "/p"}); err == nil {
		t.Error("relative binary accepted")
	}
}

func TestOurs(t *testing.T) {
	for cmd, want := range map[string]bool{
		"runtasks stop-hook --epic x":         true,
		"/usr/bin/runtasks prompt-hook":       true,
		"'/my dir/runtasks' session-hook":     true,
		`"C:\\bin\\runtasks.exe" stop-hook`:   false, // backslash path: base is not runtasks on unix
		"runtasks status":                     false,
		"other stop-hook":                     false,
		exe + " stop-hook --agent codex":      true,
		"bash -c 'runtasks stop-hook'":        false,
		"/opt/rt/bin/runtasks-old stop-hook":  false,
		"runtasks":                            false,
		"  runtasks   stop-hook   --agent x ": true,
	} {
		if got := ours(cmd, exe); got != want {
			t.Errorf("ours(%q) = %v", cmd, got)
		}
	}
	if q := shellQuote("/my dir/it's"); strings.Join(shellWords(q+" x"), "|") != "/my dir/it's|x" {
		t.Errorf("quote round trip: %s", q)
	}
}

func TestUnifiedDiff(t *testing.T) {
	d := unifiedDiff("f", []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"), []byte("a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\n"))
	want := "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -7,4 +7,4 @@\n g\n h\n i\n-j\n+J\n"
	if d != want {
		t.Errorf("diff:\n%s\nwant:\n%s", d, want)
	}
	if unifiedDiff("f", []byte("x\n"), []byte("x\n")) != "" {
		t.Error("diff of equal files")
	}
}

// TestMain lets the test binary act as `codex app-server` for the trust
// tests (RUNTASKS_FAKE_CODEX=1).
func TestMain(m *testing.M) {
	if os.Getenv("RUNTASKS_FAKE_CODEX") == "1" {
		fakeAppServer()
		return
	}
	os.Exit(m.Run())
}

// fakeAppServer answers initialize, hooks/list (from FAKE_CODEX_HOOKS, a
// JSON list) and config/batchWrite (edits appended to FAKE_CODEX_WRITES),
// with a notification before each answer, as the real server interleaves.
func fakeAppServer() {
	if len(os.Args) < 2 || os.Args[len(os.Args)-1] != "app-server" {
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		json.Unmarshal(in.Bytes(), &req)
		if req.ID == nil {
			continue
		}
		fmt.Fprintln(out, `{"method":"thread/started","params":{"id":99}}`)
		var result string
		switch req.Method {
		case "initialize":
			result = `{"userAgent":"codex/0.169.0"}`
		case "hooks/list":
			result = `{"data":[{"cwd":"x","hooks":` + os.Getenv("FAKE_CODEX_HOOKS") + `}]}`
		case "config/batchWrite":
			f, _ := os.OpenFile(os.Getenv("FAKE_CODEX_WRITES"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			f.Write(append(req.Params, '\n'))
			f.Close()
			result = `{"status":"ok","version":"sha256:1","filePath":"config.toml","overriddenMetadata":null}`
		default:
			fmt.Fprintf(out, `{"id":%d,"error":{"code":-32601,"message":"unknown method"}}`+"\n", *req.ID)
			out.Flush()
			continue
		}
		fmt.Fprintf(out, `{"id":%d,"result":%s}`+"\n", *req.ID, result)
		out.Flush()
	}
}

func TestCodexTrust(t *testing.T) {
	o := opts(t, hook.Codex)
	settings, _ := SettingsPath(o)
	writes := filepath.Join(t.TempDir(), "writes.jsonl")
	hooks := []map[string]any{
		{"key": settings + ":stop:0:0", "eventName": "stop", "command": exe + " stop-hook --agent codex", "source": "project", "isManaged": false, "enabled": true, "trustStatus": "untrusted", "currentHash": "sha256:aa"},
		{"key": settings + ":userpromptsubmit:0:0", "eventName": "userPromptSubmit", "command": exe + " prompt-hook", "isManaged": false, "trustStatus": "modified", "currentHash": "sha256:bb"},
		{"key": settings + ":sessionstart:0:0", "eventName": "sessionStart", "command": exe + " session-hook", "isManaged": false, "trustStatus": "trusted", "currentHash": "sha256:cc"},
		{"key": settings + ":sessionstart:1:0", "eventName": "sessionStart", "command": "/usr/bin/greet", "isManaged": false, "trustStatus": "untrusted", "currentHash": "sha256:dd"},
		{"key": "/etc/codex/requirements.toml:stop:0:0", "eventName": "stop", "command": exe + " stop-hook --agent codex", "isManaged": true, "trustStatus": "managed"},
		{"key": "/elsewhere/hooks.json:stop:0:0", "eventName": "stop", "command": exe + " stop-hook --agent codex", "isManaged": false, "trustStatus": "untrusted", "currentHash": "sha256:ee"},
	}
	hj, _ := json.Marshal(hooks)
	self, _ := os.Executable()
	env := append(os.Environ(), "RUNTASKS_FAKE_CODEX=1", "FAKE_CODEX_HOOKS="+string(hj), "FAKE_CODEX_WRITES="+writes)
	o.Trust = CodexTrust{Bin: self, Env: env, Dir: o.ProjectDir, Timeout: 20 * time.Second}.Trust
	res, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := string(read(t, writes))
	want := fmt.Sprintf(`{"edits":[{"keyPath":"hooks.state.\"%[1]s:stop:0:0\".trusted_hash","mergeStrategy":"upsert","value":"sha256:aa"},{"keyPath":"hooks.state.\"%[1]s:userpromptsubmit:0:0\".trusted_hash","mergeStrategy":"upsert","value":"sha256:bb"}],"reloadUserConfig":true}`, settings)
	if strings.TrimSpace(got) != want {
		t.Errorf("batchWrite:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "Codex hooks trusted: 2 now, 1 already.") {
		t.Errorf("notes: %q", res.Notes)
	}

	// No codex: the notes say exactly what to do.
	o2 := opts(t, hook.Codex)
	res, _ = Install(context.Background(), o2)
	n := strings.Join(res.Notes, "\n")
	if !strings.Contains(n, "codex was not found on PATH") || !strings.Contains(n, `"Trust all and continue"`) || !strings.Contains(n, `trust_level = "trusted"`) {
		t.Errorf("notes without codex: %s", n)
	}

	// A server that lists none of them, and one that answers garbage: the
	// install itself stands and the notes say what happened.
	for hooksJSON, note := range map[string]string{"[]": "codex app-server listed none of them", "not-json": "trusting them failed: codex app-server hooks/list: context deadline exceeded"} {
		o3 := opts(t, hook.Codex)
		o3.Trust = CodexTrust{Bin: self, Env: append(os.Environ(), "RUNTASKS_FAKE_CODEX=1", "FAKE_CODEX_HOOKS="+hooksJSON), Dir: o3.ProjectDir, Timeout: 2 * time.Second}.Trust
		res, err = Install(context.Background(), o3)
		if err != nil || !strings.Contains(strings.Join(res.Notes, "\n"), note) || res.Files[0].Action != Created {
			t.Errorf("%s: %v %q", hooksJSON, err, res.Notes)
		}
	}
}
