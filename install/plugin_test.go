package install

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/runtasks/runtasks/hook"
	"github.com/runtasks/runtasks/prompts"
)

var update = flag.Bool("update", false, "copy the embedded skills into the plugin's skills/")

// TestPluginSkillsInSync keeps the Claude Code plugin's skills (the repo
// root's skills/) byte-equal to the ones prompts embeds. go test ./install
// -update copies them over.
func TestPluginSkillsInSync(t *testing.T) {
	root := filepath.Join("..")
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

// TestPluginHooks checks the plugin's hooks/hooks.json: the shape Claude
// Code reads, every event install registers, commands doctor recognises.
func TestPluginHooks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := Entries(hook.Claude, data)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, e := range entries {
		events = append(events, e.Event)
		if e.Program != "runtasks" {
			t.Errorf("%s runs %s, want runtasks from PATH", e.Event, e.Program)
		}
	}
	for _, ev := range specs[hook.Claude].events {
		if !slices.Contains(events, ev.event) {
			t.Errorf("plugin lacks %s", ev.event)
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
	b, err := os.ReadFile(filepath.Join("..", ".claude-plugin", "plugin.json"))
	if err != nil || json.Unmarshal(b, &manifest) != nil || manifest.Name != "runtasks" || manifest.Version == "" || manifest.Description == "" {
		t.Errorf("plugin.json: %v %+v", err, manifest)
	}
}
