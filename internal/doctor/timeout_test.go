package doctor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/hook"
)

func TestHookTimeout(t *testing.T) {
	for _, tt := range []struct {
		name   string
		checks string // workflow.checks in project.yaml
		want   time.Duration
	}{
		{"no checks", "[]", 30 * time.Second},
		{"beads only", "[beads]", 30 * time.Second},
		{"a command, default timeout", `[beads, {type: command, run: "go test ./..."}]`, 30*time.Second + 10*time.Minute + 2*time.Second},
		{"commands in a composite", `[{type: composite, checks: [{type: command, run: a, timeout: 1m}, {type: command, run: b, timeout: 30s}]}]`,
			30*time.Second + 90*time.Second + 4*time.Second},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "project.yaml"), []byte("workflow:\n  checks: "+tt.checks+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := config.Load(config.LoadOptions{StartDir: dir})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := HookTimeout(cfg); got != tt.want {
			t.Errorf("%s: HookTimeout = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// doctor warns when an installed stop hook's timeout is shorter than the
// checks need.
func TestCheckTimeouts(t *testing.T) {
	cfg := &config.Config{}
	cfg.Workflow.Checks = []config.CheckSpec{{Type: "command", Run: "go test ./...", Timeout: 5 * time.Minute}}
	stop := func(timeout string) string {
		return `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"runtasks stop-hook --epic e","timeout":` + timeout + `}]}]}}`
	}
	for _, tt := range []struct {
		name, file, data string
		level            string
		msg, fix         []string
	}{
		{"none installed", "", "", OK, []string{"no stop hook installed"}, nil},
		{"too short", "/p/.claude/settings.json", stop("30"), Warning, []string{"5m32s", "/p/.claude/settings.json (30s)"}, []string{`"timeout"`, "332"}},
		{"long enough", "/p/.claude/settings.json", stop("600"), OK, []string{"covers the checks (5m32s)"}, nil},
		{"gemini counts milliseconds", "/p/.gemini/settings.json", stop("30000"), Warning, []string{"(30s)"}, nil},
	} {
		in := &Inputs{Root: "/p", Home: "/h", ReadFile: files{tt.file: tt.data}.read}
		settings := map[string]agentSettings{}
		for _, agent := range hook.Agents {
			settings[agent] = readSettings(in, agent)
		}
		f := checkTimeouts(cfg, settings)
		if f.Level != tt.level || !containsAll(f.Msg, tt.msg) || !containsAll(f.Fix, tt.fix) {
			t.Errorf("%s: %+v; want %s with %q, fix with %q", tt.name, f, tt.level, tt.msg, tt.fix)
		}
	}
}
