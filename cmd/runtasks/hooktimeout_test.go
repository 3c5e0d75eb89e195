package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/config"
)

func TestHookTimeoutFor(t *testing.T) {
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
		if got := hookTimeoutFor(cfg); got != tt.want {
			t.Errorf("%s: hookTimeoutFor = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// doctor warns when an installed stop hook's timeout is shorter than the
// checks need.
func TestDoctorHookTimeout(t *testing.T) {
	root := t.TempDir()
	home := t.TempDir()
	settings := filepath.Join(root, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	write := func(timeout string) {
		os.WriteFile(settings, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"runtasks stop-hook --epic e","timeout":`+timeout+`}]}]}}`), 0o644)
	}
	cfg := &config.Config{}
	cfg.Workflow.Checks = []config.CheckSpec{{Type: "command", Run: "go test ./...", Timeout: 5 * time.Minute}}
	o := &doctorOptions{Root: root, Home: home}
	write("30")
	c := doctorHookTimeout(o, cfg)
	if c.Level != levelWarning || !strings.Contains(c.Msg, "5m32s") || !strings.Contains(c.Fix, `"timeout"`) || !strings.Contains(c.Fix, "332") {
		t.Errorf("a short timeout: %+v", c)
	}
	write("600")
	if c := doctorHookTimeout(o, cfg); c.Level != levelOK {
		t.Errorf("a long enough timeout: %+v", c)
	}
}
