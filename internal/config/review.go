package config

import (
	"fmt"
	"path/filepath"
	"strings"

	kmaps "github.com/knadh/koanf/maps"
	"github.com/knadh/koanf/parsers/yaml"
)

// Exec is one thing a project.yaml makes runtasks do beyond its defaults:
// a program or shell command it runs, or a path outside the project it
// reads or writes.
type Exec struct {
	// Key is where the file says it (workflow.checks[1].run).
	Key   string
	Value string
	// Runs: a program or command; otherwise a path outside the project.
	Runs bool
}

// Review lists what a project.yaml's content would make runtasks run —
// beads.bin, the command checks (composite ones included, and
// workflow.verify's with its overrides and task_commands), the notify
// commands, runtasks run's agent binaries — and the paths outside the
// project root it would read or write (prompts.run_tasks, claim.templates,
// log.file, state.dir, beads.dir, claim.runs_dir, a command check's dir).
// It reads the file as data; nothing in it runs. A file that is not YAML
// is an error: nothing of it can be shown.
func Review(root string, data []byte) ([]Exec, error) {
	raw, err := yaml.Parser().Unmarshal(data)
	if err != nil {
		return nil, err
	}
	var out []Exec
	def := cfgMap(new(Defaults()))
	at := func(m map[string]any, key string) any { return kmaps.Search(m, strings.Split(key, ".")) }
	run := func(key string, v any) {
		if s, ok := v.(string); ok && s != "" && s != at(def, key) {
			out = append(out, Exec{Key: key, Value: s, Runs: true})
		} else if v != nil && !ok {
			out = append(out, Exec{Key: key, Value: fmt.Sprint(v), Runs: true})
		}
	}
	outside := func(key string, v any) {
		s, _ := v.(string)
		r, err := s, error(nil)
		if filepath.IsAbs(s) {
			r, err = filepath.Rel(root, s)
		}
		if s != "" && (err != nil || !filepath.IsLocal(r)) {
			out = append(out, Exec{Key: key, Value: s})
		}
	}
	run("beads.bin", at(raw, "beads.bin"))
	// each calls fn on each mapping in the list v, at its path key[i].
	each := func(key string, v any, fn func(k string, m map[string]any)) {
		list, _ := v.([]any)
		for i, item := range list {
			if m, ok := item.(map[string]any); ok {
				fn(fmt.Sprintf("%s[%d]", key, i), m)
			}
		}
	}
	var checks func(key string, v any)
	checks = func(key string, v any) {
		each(key, v, func(k string, m map[string]any) {
			run(k+".run", m["run"])
			outside(k+".dir", m["dir"])
			checks(k+".checks", m["checks"])
		})
	}
	checks("workflow.checks", at(raw, "workflow.checks"))
	checks("workflow.verify.checks", at(raw, "workflow.verify.checks"))
	each("workflow.verify.overrides", at(raw, "workflow.verify.overrides"), func(k string, m map[string]any) {
		checks(k+".checks", m["checks"])
	})
	if on, _ := at(raw, "workflow.verify.task_commands").(bool); on {
		out = append(out, Exec{Key: "workflow.verify.task_commands", Value: "each task's bd metadata key verify, as a shell command", Runs: true})
	}
	each("workflow.notify", at(raw, "workflow.notify"), func(k string, m map[string]any) {
		run(k+".run", m["run"])
	})
	run("run.claude_bin", at(raw, "run.claude_bin"))
	run("run.codex_bin", at(raw, "run.codex_bin"))
	for _, key := range []string{"prompts.run_tasks", "claim.templates", "log.file", "state.dir", "beads.dir", "claim.runs_dir"} {
		outside(key, at(raw, key))
	}
	return out, nil
}

// ReviewText is what the person is shown before trusting a project.yaml:
// what Review found in it, one item a line, or that it asks nothing
// beyond the defaults.
func ReviewText(file string, execs []Exec, err error) string {
	if err != nil {
		return fmt.Sprintf("%s is not valid YAML (%v): the hooks will report it; nothing in it can run.\n", file, err)
	}
	var runs, paths []string
	for _, e := range execs {
		line := fmt.Sprintf("  %-26s %s", e.Key, e.Value)
		if e.Runs {
			runs = append(runs, line)
		} else {
			paths = append(paths, line)
		}
	}
	if len(runs)+len(paths) == 0 {
		return file + " runs nothing of its own (bd from PATH, no command checks, no notify commands) and names no path outside the project.\n"
	}
	var b strings.Builder
	if len(runs) > 0 {
		fmt.Fprintf(&b, "%s would make runtasks run:\n%s\n", file, strings.Join(runs, "\n"))
	}
	if len(paths) > 0 {
		fmt.Fprintf(&b, "%s names paths outside the project, which runtasks would read or write:\n%s\n", file, strings.Join(paths, "\n"))
	}
	return b.String()
}
