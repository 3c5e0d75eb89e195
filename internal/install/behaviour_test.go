package install

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runtasks/runtasks/internal/hook"
)

func writeSettings(t *testing.T, o Options, content string) string {
	t.Helper()
	settings, _ := SettingsPath(o)
	os.MkdirAll(filepath.Dir(settings), 0o755)
	if err := os.WriteFile(settings, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return settings
}

// A second install with other flags changes runtasks' own entries where
// they stand and nothing else; the user's runtasks entries survive both
// installs and the uninstall.
func TestReinstallTouchesOnlyOwnEntries(t *testing.T) {
	ctx := context.Background()
	for _, agent := range hook.Agents {
		t.Run(agent, func(t *testing.T) {
			o := opts(t, agent)
			seed := userRuntasks(agent)
			settings := writeSettings(t, o, seed)
			o.Epic = "bd-one"
			if _, err := Install(ctx, o); err != nil {
				t.Fatal(err)
			}
			first := string(read(t, settings))
			o.Epic = "bd-two"
			o.LoopLimit = 7
			res, err := Install(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			second := string(read(t, settings))
			if res.Files[0].Action != Updated || strings.Contains(second, "bd-one") || !strings.Contains(second, "--epic bd-two") {
				t.Fatalf("second install:\n%s", second)
			}
			// Only the lines of runtasks' own stop entries differ.
			a, b := strings.Split(first, "\n"), strings.Split(second, "\n")
			if len(a) != len(b) {
				t.Fatalf("line count changed: %d → %d\n%s", len(a), len(b), second)
			}
			for i := range a {
				if a[i] != b[i] && !strings.Contains(b[i], "--epic bd-two") && !strings.Contains(b[i], "loop_limit") {
					t.Errorf("line %d changed: %q → %q", i+1, a[i], b[i])
				}
			}
			for _, keep := range []string{"runtasks stop-hook --epic bd-mine --max-cycles 5", "runtasks session-hook --log-level debug"} {
				if !strings.Contains(second, keep) {
					t.Errorf("user's entry %q lost", keep)
				}
			}
			if _, err := Uninstall(ctx, o); err != nil {
				t.Fatal(err)
			}
			if got := string(read(t, settings)); got != seed {
				t.Errorf("uninstall:\n%s\nwant:\n%s", got, seed)
			}
		})
	}
}

// An entry install wrote and the user changed since is theirs: uninstall
// leaves it and says so.
func TestEditedEntryIsKept(t *testing.T) {
	ctx := context.Background()
	o := opts(t, hook.Claude)
	settings := writeSettings(t, o, "{}\n")
	if _, err := Install(ctx, o); err != nil {
		t.Fatal(err)
	}
	b := bytes.Replace(read(t, settings), []byte(`"timeout": 30`), []byte(`"timeout": 99`), 1)
	os.WriteFile(settings, b, 0o644)
	res, err := Uninstall(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(read(t, settings), []byte(`"timeout": 99`)) || !strings.Contains(strings.Join(res.Notes, "\n"), "1 of the 5 entries install wrote were changed") {
		t.Errorf("notes %q, file:\n%s", res.Notes, read(t, settings))
	}
}

// A symlinked settings file is written through: the link stays, the
// target gets the entries and gets its bytes back.
func TestSymlinkWrittenThrough(t *testing.T) {
	ctx := context.Background()
	for _, global := range []bool{false, true} {
		o := opts(t, hook.Claude)
		o.Global = global
		dotfiles := filepath.Join(t.TempDir(), "dotfiles")
		os.MkdirAll(dotfiles, 0o755)
		target := filepath.Join(dotfiles, "claude.json")
		seed := reindent(seeds[hook.Claude], "    ")
		os.WriteFile(target, []byte(seed), 0o600)
		settings, _ := SettingsPath(o)
		os.MkdirAll(filepath.Dir(settings), 0o755)
		// A relative link, as dotfile managers (stow) make them.
		rel, err := filepath.Rel(filepath.Dir(settings), target)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(rel, settings); err != nil {
			t.Fatal(err)
		}
		res, err := Install(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if l, err := os.Readlink(settings); err != nil || l != rel {
			t.Fatalf("the link was replaced: %q %v", l, err)
		}
		if !bytes.Contains(read(t, target), []byte("stop-hook --agent claude")) {
			t.Error("the target did not get the hooks")
		}
		if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
			t.Errorf("target mode %v", fi.Mode().Perm())
		}
		if res.Files[0].Backup != o.backupPath(settings) || !strings.HasPrefix(res.Files[0].Backup, o.ManifestDir+"/") {
			t.Errorf("backup %q", res.Files[0].Backup)
		}
		if ents, _ := os.ReadDir(dotfiles); len(ents) != 1 {
			t.Errorf("dotfiles holds %v", ents)
		}
		if _, err := Uninstall(ctx, o); err != nil {
			t.Fatal(err)
		}
		if string(read(t, target)) != seed {
			t.Errorf("target after uninstall:\n%s", read(t, target))
		}
		if l, _ := os.Readlink(settings); l != rel {
			t.Errorf("link now %q", l)
		}
	}
}

// What install does not understand it refuses, with file, line and key,
// and changes nothing (no backup, no record, no other file).
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		agent, content, want string
		mode                 os.FileMode
	}{
		{hook.Claude, `{"hooks":{"Stop":"oops"}}`, `line 1: "hooks.Stop" is a string, want a list`, 0o644},
		{hook.Gemini, "{\n  \"hooks\": {\n    \"AfterAgent\": {\"a\": 1}\n  }\n}\n", `line 3: "hooks.AfterAgent" is an object, want a list`, 0o644},
		{hook.Codex, "{\n  \"hooks\": [1]\n}\n", `line 2: "hooks" is a list, want an object`, 0o644},
		{hook.Cursor, "[]", `line 1: the file holds a list, want an object`, 0o644},
		{hook.Claude, "{\n  \"a\": 1,\n  oops\n}\n", `not valid JSON: line 3, column 3`, 0o644},
		{hook.Gemini, `{"hooks": {`, `not valid JSON: line 1`, 0o644},
		{hook.Claude, "{}\n", `is read-only`, 0o444},
	} {
		o := opts(t, tc.agent)
		settings := writeSettings(t, o, tc.content)
		os.Chmod(settings, tc.mode)
		before := snapshot(t, filepath.Dir(o.ProjectDir))
		_, err := Install(ctx, o)
		if err == nil || !strings.Contains(err.Error(), settings+": ") || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("%s %q: err %v, want %q", tc.agent, tc.content, err, tc.want)
		}
		after := snapshot(t, filepath.Dir(o.ProjectDir))
		for k := range after {
			if strings.HasSuffix(k, ".lock") || k == "state/" { // the record's lock file
				delete(after, k)
			}
		}
		if d := diffSnap(before, after); len(d) > 0 {
			t.Errorf("%q: changed %v", tc.content, d)
		}
	}
}

// One backup per file, the newest, and none after uninstall.
func TestOneBackup(t *testing.T) {
	ctx := context.Background()
	o := opts(t, hook.Gemini)
	settings := writeSettings(t, o, seeds[hook.Gemini])
	var last []byte
	for i := range 6 {
		last = read(t, settings)
		o.Epic = "bd-" + string(rune('a'+i))
		res, err := Install(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Files[0].Backup == "" {
			t.Fatalf("install %d: no backup reported", i)
		}
	}
	// The backup is kept in the user's state directory, never next to the
	// settings file in the project.
	var baks []string
	for _, dir := range []string{filepath.Dir(settings), filepath.Join(o.ManifestDir, "backups")} {
		m, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range m {
			if b := filepath.Base(f); strings.Contains(b, ".bak") || strings.Contains(b, "tmp") {
				baks = append(baks, f)
			}
		}
	}
	if len(baks) != 1 || baks[0] != o.backupPath(settings) || !bytes.Equal(read(t, baks[0]), last) {
		t.Fatalf("backups %v", baks)
	}
	// Unchanged: no backup written or reported.
	res, _ := Install(ctx, o)
	if res.Files[0].Backup != "" {
		t.Error("backup reported without a change")
	}
	if _, err := Uninstall(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(baks[0]); !os.IsNotExist(err) {
		t.Error("backup left after uninstall")
	}
}

// project.yaml and the skills' directories stay while any agent's
// install still uses them; the last uninstall leaves the project as it was.
func TestSharedFilesReferenceCounted(t *testing.T) {
	ctx := context.Background()
	o := opts(t, hook.Claude)
	before := snapshot(t, o.ProjectDir)
	yaml := filepath.Join(o.ProjectDir, "project.yaml")
	order := []string{hook.Claude, hook.Gemini, hook.Codex, hook.Cursor}
	for _, a := range order {
		o.Agent = a
		if _, err := Install(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range []string{hook.Codex, hook.Gemini, hook.Claude, hook.Cursor} {
		o.Agent = a
		if _, err := Uninstall(ctx, o); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(yaml)
		if last := i == len(order)-1; last != os.IsNotExist(err) {
			t.Errorf("after uninstall %s: project.yaml present=%v", a, err == nil)
		}
	}
	if d := diffSnap(before, snapshot(t, o.ProjectDir)); len(d) > 0 {
		t.Errorf("left behind: %v", d)
	}
	// A project.yaml the user wrote is never removed.
	os.WriteFile(yaml, []byte("workflow:\n  epic: bd-1\n"), 0o644)
	Install(ctx, o)
	Uninstall(ctx, o)
	if _, err := os.Stat(yaml); err != nil {
		t.Error("user's project.yaml removed")
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	o := opts(t, hook.Claude)
	o.DryRun = true
	writeSettings(t, o, "{\n\t\"model\": \"opus\"\n}\n")
	before := snapshot(t, filepath.Dir(o.ProjectDir))
	res, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Files[0].Diff
	if !strings.Contains(d, "+\t\t\t\t\t\t\"command\": \"runtasks stop-hook --agent claude\",") || !strings.HasPrefix(d, "--- a/") || !strings.Contains(d, "-\t\"model\": \"opus\"\n+\t\"model\": \"opus\",\n") {
		t.Errorf("diff:\n%s", d)
	}
	if diff := diffSnap(before, snapshot(t, filepath.Dir(o.ProjectDir))); len(diff) > 0 {
		t.Errorf("dry run wrote %v", diff)
	}
	o.DryRun = false
	if res, _ := Install(context.Background(), o); res.Files[0].Diff != "" {
		t.Error("diff computed without --dry-run")
	}
}

// TestKillAtEveryPoint kills an install (a child process) with SIGKILL at
// each step of its writes: the settings file is always either the old or
// the new content, and after the next run no temporary file is left.
func TestKillAtEveryPoint(t *testing.T) {
	self, _ := os.Executable()
	for _, point := range []string{"record", "written", "backup", "renamed"} {
		t.Run(point, func(t *testing.T) {
			o := opts(t, hook.Claude)
			seed := seeds[hook.Claude]
			settings := writeSettings(t, o, seed)
			cmd := exec.Command(self, "-test.run=^$")
			cmd.Env = append(os.Environ(), "RUNTASKS_INSTALL_CHILD=1", "RUNTASKS_INSTALL_KILL_AT="+point,
				"RT_PROJECT="+o.ProjectDir, "RT_HOME="+o.Home, "RT_STATE="+o.ManifestDir)
			err := cmd.Run()
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed at %s: %v", point, err)
			}
			got := string(read(t, settings))
			if got != seed {
				if _, err := Entries(hook.Claude, []byte(got)); err != nil || !strings.Contains(got, "stop-hook") {
					t.Fatalf("settings neither old nor new:\n%s", got)
				}
			}
			if b, err := os.ReadFile(o.backupPath(settings)); err == nil && string(b) != seed {
				t.Errorf("backup holds %q", b)
			}
			// Only a kill between write and rename leaves the temporary
			// file (the next run removes it).
			strays := func() []string {
				var out []string
				filepath.Walk(filepath.Dir(o.ProjectDir), func(p string, _ os.FileInfo, _ error) error {
					if strings.Contains(filepath.Base(p), "tmp") {
						out = append(out, p)
					}
					return nil
				})
				return out
			}
			if n := len(strays()); (n > 0) != (point == "written") {
				t.Errorf("after a kill at %s: temporary files %v", point, strays())
			}
			// The next run finishes the job and leaves no stray file.
			if _, err := Install(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			if _, err := Uninstall(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			if got := string(read(t, settings)); got != seed {
				t.Errorf("after recovery:\n%s", got)
			}
			if stray := strays(); len(stray) > 0 {
				t.Errorf("stray files: %v", stray)
			}
		})
	}
}

// installChild is the child of TestKillAtEveryPoint.
func installChild() {
	point := os.Getenv("RUNTASKS_INSTALL_KILL_AT")
	atPoint = func(p string) {
		if p == point {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	o := Options{Agent: hook.Claude, ProjectDir: os.Getenv("RT_PROJECT"), Home: os.Getenv("RT_HOME"),
		ManifestDir: os.Getenv("RT_STATE"), Executable: exe}
	Install(context.Background(), o)
	os.Exit(3)
}

// TestAnotherMachinesEntries: a committed settings file holds runtasks'
// entries written on another machine (an absolute path there) and an
// earlier epic; a teammate's install replaces them where they stand (the
// project's hooks call runtasks from PATH) and never adds a second set;
// a hook the user wrote with other flags stays; uninstall puts the file
// back byte for byte.
func TestAnotherMachinesEntries(t *testing.T) {
	ctx := context.Background()
	alice := "/home/alice/go/bin/runtasks"
	seed := `{
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "` + alice + ` stop-hook --agent claude --epic bd-old", "timeout": 30}]},
      {"hooks": [{"type": "command", "command": "runtasks stop-hook --epic bd-mine --max-cycles 5"}]},
      {"hooks": [{"type": "command", "command": "/srv/bob/runtasks-hook stop-hook --agent claude"}]}
    ],
    "UserPromptSubmit": [
      {"hooks": [{"type": "command", "command": "` + alice + ` prompt-hook", "timeout": 30}]}
    ]
  }
}
`
	o := opts(t, hook.Claude)
	o.Epic = "bd-new"
	settings := writeSettings(t, o, seed)
	if _, err := Install(ctx, o); err != nil {
		t.Fatal(err)
	}
	installed := read(t, settings)
	entries, err := Entries(hook.Claude, installed)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Event+": "+e.Command)
	}
	want := []string{
		"Stop: runtasks stop-hook --agent claude --epic bd-new",
		"Stop: runtasks stop-hook --epic bd-mine --max-cycles 5",
		"UserPromptSubmit: runtasks prompt-hook",
		"SubagentStop: runtasks stop-hook --agent claude --epic bd-new",
		"SessionStart: runtasks session-hook",
		"PreToolUse: runtasks pre-tool-hook --agent claude --epic bd-new",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s\nfile:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), installed)
	}
	if bytes.Contains(installed, []byte("/home/alice")) || bytes.Contains(installed, []byte("/srv/bob")) {
		t.Errorf("another machine's path is left:\n%s", installed)
	}
	// The second teammate's install of the committed result: nothing to do.
	o2 := opts(t, hook.Claude)
	o2.Epic = "bd-new"
	settings2 := writeSettings(t, o2, string(installed))
	res, err := Install(ctx, o2)
	if err != nil || res.Files[0].Action != Unchanged || !bytes.Equal(read(t, settings2), installed) {
		t.Errorf("a teammate's install of the committed file changed it (%v):\n%s", err, read(t, settings2))
	}
	// Uninstall: the other machine's first entries are back where they
	// stood (the duplicate set install removed stays removed).
	if _, err := Uninstall(ctx, o); err != nil {
		t.Fatal(err)
	}
	back := string(read(t, settings))
	wantBack := strings.Replace(seed, `,
      {"hooks": [{"type": "command", "command": "/srv/bob/runtasks-hook stop-hook --agent claude"}]}`, "", 1)
	if back != wantBack {
		t.Errorf("after uninstall:\n%s\nwant:\n%s", back, wantBack)
	}
}
