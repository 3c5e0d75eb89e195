package install

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/hook"
)

const missing = "\x00missing"

// reindent replaces each two-space indent unit at the start of a line.
func reindent(s, unit string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, " "))
		lines[i] = strings.Repeat(unit, n/2) + l[n:]
	}
	return strings.Join(lines, "\n")
}

// userRuntasks is a file whose own hooks run runtasks: install must not
// take them for its own.
func userRuntasks(agent string) string {
	stop := hook.NativeEvent(agent, hook.EventStop)
	if agent == hook.Cursor {
		return `{
  "version": 1,
  "hooks": {
    "` + stop + `": [
      {
        "command": "runtasks stop-hook --epic bd-mine --max-cycles 5",
        "loop_limit": 3
      }
    ],
    "afterFileEdit": [
      {
        "command": "runtasks session-hook --log-level debug"
      }
    ]
  }
}
`
	}
	return `{
  "hooks": {
    "` + stop + `": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "runtasks stop-hook --epic bd-mine --max-cycles 5",
            "timeout": 300
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
            "command": "runtasks session-hook --log-level debug"
          }
        ]
      }
    ]
  }
}
`
}

// corpus is every settings file the round trip runs on, for one agent.
func corpus(agent string) map[string]string {
	seed := seeds[agent]
	stop := hook.NativeEvent(agent, hook.EventStop)
	c := map[string]string{
		"missing":         missing,
		"blank":           "\n  \n",
		"empty":           "{}",
		"empty-nl":        "{}\n",
		"empty-spaced":    "{ }\n",
		"empty-lines":     "{\n}\n",
		"version":         `{"version":1}`,
		"hooks-empty":     `{"hooks":{}}`,
		"hooks-empty-nl":  "{\n  \"hooks\": {}\n}\n",
		"list-empty":      "{\n    \"hooks\": {\n        \"" + stop + "\": []\n    }\n}\n",
		"compact":         `{"a":1,"hooks":{"` + stop + `":[{"hooks":[{"type":"command","command":"x"}]}]}}`,
		"seed-2":          seed,
		"seed-4":          reindent(seed, "    "),
		"seed-tab":        reindent(seed, "\t"),
		"seed-crlf":       strings.ReplaceAll(seed, "\n", "\r\n"),
		"seed-no-nl":      strings.TrimSuffix(seed, "\n"),
		"unicode":         "{\n  \"ключ\": \"значение\",\n  \"hooks\": {\n    \"" + stop + "\": [],\n    \"😀 émoji\": [\"ü\"]\n  },\n  \"名前\": {\"é\": 1}\n}\n",
		"user-runtasks":   userRuntasks(agent),
		"comments":        "// my settings, hand-tuned\n{\n  /* model */ \"model\": \"x\", // trailing\n  \"hooks\": { // runtasks goes here\n    \"" + stop + "\": [\n      // none yet\n    ],\n  },\n  /* the end */\n}\n// bye\n",
		"header-comment":  "/*\n * My settings\n */\n{\n    \"model\": \"x\"\n}\n",
		"trailing-commas": "{\n\t\"a\": [1, 2,],\n\t\"hooks\": {\n\t\t\"" + stop + "\": [\n\t\t\t{\"hooks\": [], \"x\": 1},\n\t\t],\n\t},\n}\n",
	}
	return c
}

// snapshot lists every file under dir with its content (links as links).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "-> " + l
		case d.IsDir():
			out[rel+"/"] = ""
		default:
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func diffSnap(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "lost "+k)
		} else if v != w {
			out = append(out, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "left "+k)
		}
	}
	slices.Sort(out)
	return out
}

// TestRoundTripCorpus: for every agent, project and --global, and every
// file of the corpus, install writes runtasks' entries (valid JSON stays
// valid JSON), keeps every other byte, a second install changes nothing,
// and uninstall gives back the original directory tree byte for byte.
func TestRoundTripCorpus(t *testing.T) {
	ctx := context.Background()
	for _, agent := range hook.Agents {
		for _, global := range []bool{false, true} {
			for name, content := range corpus(agent) {
				scope := "project"
				if global {
					scope = "global"
				}
				t.Run(agent+"/"+scope+"/"+name, func(t *testing.T) {
					o := opts(t, agent)
					o.Global = global
					o.Epic = "bd-x7y8"
					settings, _ := SettingsPath(o)
					if content != missing {
						os.MkdirAll(filepath.Dir(settings), 0o755)
						if err := os.WriteFile(settings, []byte(content), 0o640); err != nil {
							t.Fatal(err)
						}
					}
					top := filepath.Dir(o.ProjectDir)
					before := snapshot(t, top)

					res, err := Install(ctx, o)
					if err != nil {
						t.Fatal(err)
					}
					installed := read(t, settings)
					entries, err := Entries(agent, installed)
					if err != nil {
						t.Fatalf("installed file does not parse: %v\n%s", err, installed)
					}
					ourN := 0
					for _, e := range entries {
						if o.installs(e.Command) {
							ourN++
						}
					}
					if ourN != len(specs[agent].events) {
						t.Errorf("%d runtasks entries, want %d:\n%s", ourN, len(specs[agent].events), installed)
					}
					rejected := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "skips the whole file") })
					if want := (name == "comments" || name == "trailing-commas" || name == "header-comment") && specs[agent].strict; rejected != want {
						t.Errorf("a note that %s skips the file: %v, want %v (%q)", agent, rejected, want, res.Notes)
					}
					if name == "seed-crlf" && bytes.Count(installed, []byte("\n")) != bytes.Count(installed, []byte("\r\n")) {
						t.Errorf("a CRLF file got lines ending in LF alone:\n%q", installed)
					}
					if name == "header-comment" && agent != "cursor" && !bytes.Contains(installed, []byte("\n    \"hooks\": {\n        \"")) {
						t.Errorf("added lines not indented by the object's 4 spaces:\n%s", installed)
					}
					if json.Valid([]byte(content)) && !json.Valid(installed) {
						t.Errorf("valid JSON became invalid:\n%s", installed)
					}
					if name == "user-runtasks" {
						for _, keep := range []string{"runtasks stop-hook --epic bd-mine --max-cycles 5", "runtasks session-hook --log-level debug"} {
							if !bytes.Contains(installed, []byte(keep)) {
								t.Errorf("user's entry %q lost:\n%s", keep, installed)
							}
						}
						if len(entries) != ourN+2 {
							t.Errorf("entries: %+v", entries)
						}
					}
					fc := res.Files[0]
					wantBackup := content != missing && fc.Action == Updated
					if (fc.Backup != "") != wantBackup {
						t.Errorf("backup %q for %s", fc.Backup, fc.Action)
					}
					if wantBackup && string(read(t, fc.Backup)) != content {
						t.Error("backup does not hold the old file")
					}
					if content != missing {
						if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o640 {
							t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
						}
					}

					// Twice: nothing changes.
					res, err = Install(ctx, o)
					if err != nil {
						t.Fatal(err)
					}
					if res.Changed() || !bytes.Equal(read(t, settings), installed) {
						t.Fatalf("second install changed something: %+v\n%s", res.Files, read(t, settings))
					}

					// Uninstall: the tree as it was, byte for byte.
					if _, err := Uninstall(ctx, o); err != nil {
						t.Fatal(err)
					}
					after := snapshot(t, top)
					for k := range after {
						if strings.HasPrefix(k, "state/") || k == "state/" {
							delete(after, k)
						}
					}
					if d := diffSnap(before, after); len(d) > 0 {
						t.Errorf("uninstall left the tree different: %v", d)
						if content != missing {
							t.Errorf("settings now:\n%q\nwas:\n%q", read(t, settings), content)
						}
					}
					if m, _ := filepath.Glob(filepath.Join(o.ManifestDir, "*.json")); len(m) != 0 {
						t.Errorf("install record left: %v", m)
					}
					if res, _ := Uninstall(ctx, o); res.Changed() {
						t.Errorf("second uninstall changed something: %+v", res.Files)
					}
				})
			}
		}
	}
}
