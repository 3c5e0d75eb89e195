package install

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/hook"
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
	return Options{Agent: agent, ProjectDir: proj, Home: home, Executable: exe, LoopLimit: 50,
		ManifestDir: filepath.Join(dir, "state")}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	if _, err := Install(context.Background(), Options{Agent: hook.Claude, Global: true, Executable: "runtasks", Home: "/h"}); err == nil {
		t.Error("relative binary accepted for the user's settings")
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
		"/opt/rt/bin/runtasks-hook stop-hook": true,
		"runtasks-hook status":                false,
		"runtasks":                            false,
		"  runtasks   stop-hook   --agent x ": true,
	} {
		if got := ours(cmd); got != want {
			t.Errorf("ours(%q) = %v", cmd, got)
		}
	}
	if q := config.ShellQuote("/my dir/it's"); strings.Join(shellWords(q+" x"), "|") != "/my dir/it's|x" {
		t.Errorf("quote round trip: %s", q)
	}
}

// TestMain lets the test binary act as `codex app-server` for the trust
// tests (RUNTASKS_FAKE_CODEX=1).
func TestMain(m *testing.M) {
	if os.Getenv("RUNTASKS_FAKE_CODEX") == "1" {
		fakeAppServer()
		return
	}
	if os.Getenv("RUNTASKS_INSTALL_CHILD") == "1" {
		installChild()
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
		{"key": settings + ":stop:0:0", "eventName": "stop", "command": "runtasks stop-hook --agent codex", "source": "project", "isManaged": false, "enabled": true, "trustStatus": "untrusted", "currentHash": "sha256:aa"},
		{"key": settings + ":userpromptsubmit:0:0", "eventName": "userPromptSubmit", "command": "runtasks prompt-hook", "isManaged": false, "trustStatus": "modified", "currentHash": "sha256:bb"},
		{"key": settings + ":sessionstart:0:0", "eventName": "sessionStart", "command": "runtasks session-hook", "isManaged": false, "trustStatus": "trusted", "currentHash": "sha256:cc"},
		{"key": settings + ":sessionstart:1:0", "eventName": "sessionStart", "command": "/usr/bin/greet", "isManaged": false, "trustStatus": "untrusted", "currentHash": "sha256:dd"},
		{"key": "/etc/codex/requirements.toml:stop:0:0", "eventName": "stop", "command": "runtasks stop-hook --agent codex", "isManaged": true, "trustStatus": "managed"},
		{"key": "/elsewhere/hooks.json:stop:0:0", "eventName": "stop", "command": "runtasks stop-hook --agent codex", "isManaged": false, "trustStatus": "untrusted", "currentHash": "sha256:ee"},
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
