package prompts

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The rendered orchestration prompt is compared with a golden file.
func TestRenderRunTasksGolden(t *testing.T) {
	got, err := Render(runTasks, Data{Epic: "bd-x7y8", MaxCycles: 50})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "run-tasks.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got+"\n" != string(want) {
		t.Errorf("rendered prompt differs from %s (run go test ./prompts -update)\ngot:\n%s", golden, got)
	}
	if strings.Contains(got, "{epic_id}") || strings.Count(got, "bd-x7y8") < 3 {
		t.Errorf("placeholder not filled:\n%s", got)
	}
}

func TestRenderTemplateFields(t *testing.T) {
	got, err := Render("epic {epic_id} / {{.Epic}} / max {{.MaxCycles}} / {{.Session}}", Data{Epic: "e1", Session: "s", MaxCycles: 9})
	if err != nil {
		t.Fatal(err)
	}
	if want := "epic e1 / e1 / max 9 / s"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := Render("{{.Nope}}", Data{}); err == nil {
		t.Error("an unknown field must be an error")
	}
	if _, err := Render("{{", Data{}); err == nil {
		t.Error("a broken template must be an error")
	}
}

func TestLoadOverride(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mine.md")
	os.WriteFile(p, []byte("custom {epic_id}"), 0o644)
	got, err := Load(p)
	if err != nil || got != "custom {epic_id}" {
		t.Fatalf("Load(%s) = %q, %v", p, got, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.md")); err == nil {
		t.Error("a missing override must be an error")
	}
	if got, _ := Load(""); got != runTasks {
		t.Error("empty path must give the embedded prompt")
	}
	if s, err := Read("skills/completion-checklist/SKILL.md"); err != nil || !strings.Contains(s, "Honesty check") {
		t.Errorf("completion checklist skill missing: %v", err)
	}
}

// TestRenderWithoutActions: a template without Go template actions is
// filled by replacing {epic_id}, and reads exactly as the Go template
// would render it.
func TestRenderWithoutActions(t *testing.T) {
	d := Data{Epic: "bd-{x}.1", Session: "s1", MaxCycles: 7}
	for _, tmpl := range []string{
		runTasks,
		"",
		"plain text\n\n\n",
		"epic {epic_id} and {epic_id}}, {epic_id}{epic_id}\n",
		"{{epic_id}: not a fast one",
		"{{.Session}} {{.MaxCycles}} {epic_id}",
		"{ {epic_id} } }} {",
	} {
		got, err := Render(tmpl, d)
		want, werr := Render("{{/**/}}"+tmpl, d) // a comment action: the Go template path
		if (err == nil) != (werr == nil) || got != want {
			t.Errorf("Render(%q) = %q, %v; the Go template gives %q, %v", tmpl, got, err, want, werr)
		}
	}
}

// The loop is the person's: nothing given to the model tells it how to
// release itself (disarm, reset, untrust, uninstall, a --max-cycles of 0).
func TestPromptsDoNotTellHowToRelease(t *testing.T) {
	texts := map[string]string{"run-tasks.md": runTasks, "run-task.md": RunTask("bd-x7y8.2")}
	for _, name := range []string{"skills/run-tasks/SKILL.md", "skills/completion-checklist/SKILL.md"} {
		s, err := Read(name)
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = s
	}
	for name, s := range texts {
		for _, cmd := range []string{"disarm", "runtasks reset", "untrust", "uninstall", "enabled: false"} {
			if strings.Contains(s, cmd) {
				t.Errorf("%s tells the model %q", name, cmd)
			}
		}
	}
	if got := RunTask("bd-x7y8.2"); !strings.Contains(got, "bd close bd-x7y8.2") || strings.Contains(got, "{task_id}") {
		t.Errorf("RunTask: %s", got)
	}
}
