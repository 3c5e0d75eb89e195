package install

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/prompts"
)

var update = flag.Bool("update", false, "copy the embedded skills into the plugin's skills/")

// TestPluginSkillsInSync keeps the Claude Code plugin's skills (the repo
// root's skills/) byte-equal to the ones prompts embeds. go test ./install
// -update copies them over.
func TestPluginSkillsInSync(t *testing.T) {
	root := filepath.Join("..", "..")
	found := 0
	for _, name := range Skills {
		want, err := prompts.Read("skills/" + name + "/SKILL.md")
		if err != nil {
			t.Errorf("prompts does not embed skill %s: %v", name, err)
			continue
		}
		found++
		path := filepath.Join(root, "skills", name, "SKILL.md")
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s differs from prompts/skills/%s/SKILL.md (run go test ./install -update)", path, name)
		}
	}
	if found == 0 {
		t.Fatal("prompts embeds none of the skills")
	}
}

// TestPluginHooks checks the plugin's hooks/hooks.json (the shape Claude
// Code reads, every event install registers, each running the wrapper
// script with the subcommand install would write), and the marketplace
// manifest that `/plugin marketplace add <repo>` reads.
func TestPluginHooks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Description string
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	const wrapper = `sh "${CLAUDE_PLUGIN_ROOT}/hooks/runtasks.sh" `
	o := Options{Agent: hook.Claude, Executable: "runtasks"}
	for _, ev := range specs[hook.Claude].events {
		groups := file.Hooks[ev.event]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 || groups[0].Matcher != ev.matcher {
			t.Errorf("%s: %+v", ev.event, groups)
			continue
		}
		h := groups[0].Hooks[0]
		if want := wrapper + strings.TrimPrefix(Command(o, ev.sub), "runtasks "); h.Command != want || h.Type != "command" || h.Timeout != 30 {
			t.Errorf("%s runs %q, want %q", ev.event, h.Command, want)
		}
	}
	var top map[string]json.RawMessage
	json.Unmarshal(data, &top)
	for k := range top {
		if k != "description" && k != "hooks" {
			t.Errorf("unexpected key %q", k)
		}
	}
	var manifest struct {
		Name, Version, Description string
	}
	b, err := os.ReadFile(filepath.Join("..", "..", ".claude-plugin", "plugin.json"))
	if err != nil || json.Unmarshal(b, &manifest) != nil || manifest.Name != "runtasks" || manifest.Version == "" || manifest.Description == "" {
		t.Errorf("plugin.json: %v %+v", err, manifest)
	}
	var market struct {
		Name    string
		Owner   struct{ Name string }
		Plugins []struct {
			Name, Source, Version string
		}
	}
	b, err = os.ReadFile(filepath.Join("..", "..", ".claude-plugin", "marketplace.json"))
	if err != nil || json.Unmarshal(b, &market) != nil || market.Name == "" || market.Owner.Name == "" ||
		len(market.Plugins) != 1 || market.Plugins[0].Name != manifest.Name || market.Plugins[0].Source != "./" || market.Plugins[0].Version != manifest.Version {
		t.Errorf("marketplace.json: %v %+v", err, market)
	}
}

// TestPluginWrapper runs hooks/runtasks.sh: it execs the first runtasks it
// finds ($RUNTASKS_BIN, PATH, $GOBIN, ~/go/bin, ~/.local/bin; a file that
// is not executable is passed over) with the hook's arguments and stdin;
// with none it exits 0 with a systemMessage.
func TestPluginWrapper(t *testing.T) {
	script, _ := filepath.Abs(filepath.Join("..", "..", "hooks", "runtasks.sh"))
	fake := func(dir, name string) string {
		os.MkdirAll(dir, 0o755)
		p := filepath.Join(dir, "runtasks")
		os.WriteFile(p, []byte("#!/bin/sh\necho "+name+" \"$@\"; cat\n"), 0o755)
		return p
	}
	home := t.TempDir()
	pathDir := filepath.Join(t.TempDir(), "bin")
	gobin := filepath.Join(t.TempDir(), "gobin")
	explicit := fake(filepath.Join(t.TempDir(), "x"), "explicit")
	run := func(env ...string) string {
		cmd := exec.Command("/bin/sh", script, "stop-hook", "--agent", "claude")
		cmd.Env = append([]string{"HOME=" + home, "PATH=/usr/bin:/bin:" + pathDir}, env...)
		cmd.Stdin = strings.NewReader("{}")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out)
	}
	if out := run(); !strings.Contains(out, `{"systemMessage":"runtasks plugin: no runtasks binary found`) || !json.Valid([]byte(out)) {
		t.Errorf("none found: %q", out)
	}
	fake(filepath.Join(home, ".local", "bin"), "local")
	if out := run(); out != "local stop-hook --agent claude\n{}" {
		t.Errorf("~/.local/bin: %q", out)
	}
	fake(filepath.Join(home, "go", "bin"), "gobin")
	if out := run(); !strings.HasPrefix(out, "gobin ") {
		t.Errorf("~/go/bin: %q", out)
	}
	fake(gobin, "GOBIN")
	if out := run("GOBIN=" + gobin); !strings.HasPrefix(out, "GOBIN ") {
		t.Errorf("$GOBIN: %q", out)
	}
	onPath := fake(pathDir, "path")
	if out := run(); !strings.HasPrefix(out, "path ") {
		t.Errorf("PATH: %q", out)
	}
	if out := run("RUNTASKS_BIN=" + explicit); !strings.HasPrefix(out, "explicit ") {
		t.Errorf("RUNTASKS_BIN: %q", out)
	}
	os.Chmod(onPath, 0o644)
	if out := run(); !strings.HasPrefix(out, "gobin ") {
		t.Errorf("runtasks on PATH not executable: %q, want ~/go/bin's", out)
	}
}
