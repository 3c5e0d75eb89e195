// Package install registers runtasks' hooks in an agent's settings file
// (Claude Code, Codex, Gemini CLI, Cursor), writes the skills and a
// project.yaml, and takes all of it out again. It merges into the files
// the agents and the user already keep: other hooks and keys stay as they
// are (key order included), an older runtasks entry is replaced in place,
// running it twice changes nothing, a backup is written before any change,
// and a dry run only shows the diff.
//
// runtasks' entries are recognised by their command: a program named
// runtasks (or the configured binary) running stop-hook, prompt-hook or
// session-hook.
package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks"
	"github.com/runtasks/runtasks/hook"
	"github.com/runtasks/runtasks/prompts"
)

// Subcommands the installed hooks run.
const (
	StopHook    = "stop-hook"
	PromptHook  = "prompt-hook"
	SessionHook = "session-hook"
)

var ourSubcommands = []string{StopHook, PromptHook, SessionHook}

// Skills are the embedded skills (prompts/skills/<name>/SKILL.md) that
// install writes for the agent; a name prompts does not hold is skipped.
var Skills = []string{"run-tasks", "completion-checklist"}

// Options says what to install where.
type Options struct {
	Agent string
	// Epic is passed to the stop hook as --epic ("" = the hook finds it:
	// RUNTASKS_EPIC, project.yaml, an armed session).
	Epic string
	// Global installs into the user's settings (home directory) instead
	// of the project's.
	Global bool
	DryRun bool
	// ProjectDir is the project root; Home the user's home directory;
	// CodexHome is $CODEX_HOME ("" = Home/.codex).
	ProjectDir, Home, CodexHome string
	// Executable is the runtasks binary the hooks run: an absolute path,
	// so that doctor can tell whether the entries point at this binary.
	Executable string
	// LoopLimit is Cursor's loop_limit for the stop hook (0 = no limit:
	// runtasks' own cycle cap then holds).
	LoopLimit int
	// Trust trusts the installed Codex hooks (nil: no trust step; the
	// result says what the user must do).
	Trust func(ctx context.Context, settings string, isOurs func(command string) bool) (TrustReport, error)
	Now   func() time.Time
}

// TrustReport says what a Codex trust step did.
type TrustReport struct {
	// Trusted lists the hook keys trusted now; Already the ones that were.
	Trusted, Already []string
}

// File actions.
const (
	Created   = "create"
	Updated   = "update"
	Removed   = "remove"
	Unchanged = "unchanged"
)

// FileChange is one file install or uninstall looked at.
type FileChange struct {
	Path   string
	Action string
	// Backup is where the old content was saved ("" when nothing existed
	// or nothing changed).
	Backup string
	// Diff is the unified diff of the change ("" when unchanged).
	Diff string

	before, after []byte
	perm          fs.FileMode
	// regenerable: the old content is what install writes (no backup needed).
	regenerable bool
}

// Result is what Install or Uninstall did (or, in a dry run, would do).
type Result struct {
	Agent    string
	Settings string
	Files    []FileChange
	// Notes are steps left to the user, one sentence each.
	Notes []string
}

// Changed reports whether any file changes.
func (r *Result) Changed() bool {
	return slices.ContainsFunc(r.Files, func(f FileChange) bool { return f.Action != Unchanged })
}

// eventSpec is one hook runtasks registers for an agent.
type eventSpec struct {
	event   string // runtasks' event name (hook.Event*)
	sub     string // runtasks subcommand
	matcher string
}

// agentSpec is how one agent keeps hooks.
type agentSpec struct {
	// dir is the agent's directory under the project or home (".claude").
	dir, file string
	events    []eventSpec
	// grouped: hooks.<Event> = [{matcher?, hooks:[handler]}]; else
	// hooks.<event> = [handler] (Cursor).
	grouped bool
	// skillsDir is where skills go, relative to the project or home.
	skillsDir string
}

var specs = map[string]agentSpec{
	hook.Claude: {dir: ".claude", file: "settings.json", grouped: true, skillsDir: ".claude/skills",
		events: []eventSpec{
			{hook.EventStop, StopHook, ""},
			// SubagentStop is allowed unless workflow.stop_hook.subagent_stop is drive.
			{hook.EventSubagentStop, StopHook, ""},
			{hook.EventPromptSubmit, PromptHook, ""},
			{hook.EventSessionStart, SessionHook, "startup|resume|clear|compact"},
		}},
	hook.Codex: {dir: ".codex", file: "hooks.json", grouped: true, skillsDir: ".agents/skills",
		events: []eventSpec{
			{hook.EventStop, StopHook, ""},
			{hook.EventPromptSubmit, PromptHook, ""},
			{hook.EventSessionStart, SessionHook, "^(startup|resume|clear)$"},
		}},
	hook.Gemini: {dir: ".gemini", file: "settings.json", grouped: true, skillsDir: ".gemini/skills",
		events: []eventSpec{
			{hook.EventStop, StopHook, ""},
			{hook.EventPromptSubmit, PromptHook, ""},
			{hook.EventSessionStart, SessionHook, ""},
		}},
	hook.Cursor: {dir: ".cursor", file: "hooks.json", grouped: false, skillsDir: ".cursor/skills",
		events: []eventSpec{
			{hook.EventStop, StopHook, ""},
			{hook.EventPromptSubmit, PromptHook, ""},
			{hook.EventSessionStart, SessionHook, ""},
		}},
}

// SettingsPath is the file install edits for agent: the project's
// (.claude/settings.json, .codex/hooks.json, .gemini/settings.json,
// .cursor/hooks.json) or, with global, the user's (~/.claude/settings.json,
// $CODEX_HOME/hooks.json, ~/.gemini/settings.json, ~/.cursor/hooks.json).
func SettingsPath(o Options) (string, error) {
	sp, ok := specs[o.Agent]
	if !ok {
		return "", fmt.Errorf("unknown agent %q (want %s)", o.Agent, strings.Join(hook.Agents, ", "))
	}
	if o.Global {
		if o.Agent == hook.Codex {
			return filepath.Join(codexHome(o), sp.file), nil
		}
		if o.Home == "" {
			return "", errors.New("no home directory")
		}
		return filepath.Join(o.Home, sp.dir, sp.file), nil
	}
	if o.ProjectDir == "" {
		return "", errors.New("no project directory")
	}
	return filepath.Join(o.ProjectDir, sp.dir, sp.file), nil
}

func codexHome(o Options) string {
	if o.CodexHome != "" {
		return o.CodexHome
	}
	return filepath.Join(o.Home, ".codex")
}

// Command is the hook command install writes for a subcommand. The stop
// hook names its agent (--agent) and epic; the prompt and session hooks
// tell the agent from its input (hook.Detect: Gemini's and Cursor's events
// are their own, and Claude Code and Codex take the same context output).
func Command(o Options, sub string) string {
	var b strings.Builder
	b.WriteString(shellQuote(o.Executable))
	b.WriteString(" " + sub)
	if sub == StopHook {
		b.WriteString(" --agent " + o.Agent)
		if o.Epic != "" {
			b.WriteString(" --epic " + shellQuote(o.Epic))
		}
	}
	return b.String()
}

func (o Options) check() error {
	if _, ok := specs[o.Agent]; !ok {
		return fmt.Errorf("unknown agent %q (want %s)", o.Agent, strings.Join(hook.Agents, ", "))
	}
	if !filepath.IsAbs(o.Executable) {
		return fmt.Errorf("the runtasks binary must be an absolute path, not %q", o.Executable)
	}
	if strings.ContainsAny(o.Epic, "\n\r\x00") {
		return errors.New("epic id holds a line break")
	}
	return nil
}

// Install merges runtasks' hooks into agent's settings file, writes the
// skills and (for a project) project.yaml when it is missing, and for
// Codex trusts the hooks through o.Trust. In a dry run it only computes
// the result.
func Install(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	settings, err := SettingsPath(o)
	if err != nil {
		return nil, err
	}
	res := &Result{Agent: o.Agent, Settings: settings}
	fc, err := planSettings(o, settings, false)
	if err != nil {
		return nil, err
	}
	res.Files = append(res.Files, fc)
	for _, name := range Skills {
		content, err := prompts.Read("skills/" + name + "/SKILL.md")
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", name, err)
		}
		fc, err := planFile(skillPath(o, name), []byte(content), false)
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, fc)
	}
	if !o.Global {
		p := filepath.Join(o.ProjectDir, "project.yaml")
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			fc, err := planFile(p, runtasks.ProjectYAMLExample, false)
			if err != nil {
				return nil, err
			}
			res.Files = append(res.Files, fc)
		}
	}
	if o.DryRun {
		res.Notes = append(res.Notes, notes(o, settings, nil, nil)...)
		return res, nil
	}
	if err := apply(o, res); err != nil {
		return res, err
	}
	var (
		tr     *TrustReport
		trErr  error
		isOurs = func(cmd string) bool { return ours(cmd, o.Executable) }
	)
	if o.Agent == hook.Codex && o.Trust != nil {
		r, err := o.Trust(ctx, settings, isOurs)
		tr, trErr = &r, err
	}
	res.Notes = append(res.Notes, notes(o, settings, tr, trErr)...)
	return res, nil
}

// Uninstall removes exactly what Install added: runtasks' hook entries
// (and the event lists, hooks object or file that held nothing else), and
// the skills and project.yaml when they are as install wrote them.
func Uninstall(ctx context.Context, o Options) (*Result, error) {
	if _, ok := specs[o.Agent]; !ok {
		return nil, fmt.Errorf("unknown agent %q (want %s)", o.Agent, strings.Join(hook.Agents, ", "))
	}
	settings, err := SettingsPath(o)
	if err != nil {
		return nil, err
	}
	res := &Result{Agent: o.Agent, Settings: settings}
	fc, err := planSettings(o, settings, true)
	if err != nil {
		return nil, err
	}
	res.Files = append(res.Files, fc)
	for _, name := range Skills {
		content, err := prompts.Read("skills/" + name + "/SKILL.md")
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", name, err)
		}
		if fc, ok := planRemoveIfSame(skillPath(o, name), []byte(content)); ok {
			res.Files = append(res.Files, fc)
		}
	}
	if !o.Global {
		if fc, ok := planRemoveIfSame(filepath.Join(o.ProjectDir, "project.yaml"), runtasks.ProjectYAMLExample); ok {
			res.Files = append(res.Files, fc)
		}
	}
	if o.DryRun {
		return res, nil
	}
	if err := apply(o, res); err != nil {
		return res, err
	}
	if o.Agent == hook.Codex {
		res.Notes = append(res.Notes, "Codex keeps the trust records (hooks.state) in config.toml; they match no hook now and do no harm.")
	}
	return res, nil
}

func skillPath(o Options, name string) string {
	base := o.ProjectDir
	if o.Global {
		base = o.Home
	}
	return filepath.Join(base, specs[o.Agent].skillsDir, name, "SKILL.md")
}

// planSettings computes the settings file's new content.
func planSettings(o Options, path string, remove bool) (FileChange, error) {
	before, perm, err := readFile(path)
	if err != nil {
		return FileChange{}, err
	}
	doc, err := decodeObject(before)
	if err != nil {
		return FileChange{}, fmt.Errorf("%s: %w (fix or move the file; nothing was changed)", path, err)
	}
	orig, _ := decodeObject(before)
	if err := merge(o, doc, remove); err != nil {
		return FileChange{}, fmt.Errorf("%s: %w (nothing was changed)", path, err)
	}
	fc := FileChange{Path: path, before: before, perm: perm}
	switch {
	case equalValues(doc, orig) && (before != nil || remove):
		fc.Action, fc.after = Unchanged, before
	case remove && doc.len() == 0:
		fc.Action = Removed
	default:
		fc.after = encode(doc)
		fc.Action = Updated
		if before == nil {
			fc.Action = Created
		}
	}
	fc.Diff = unifiedDiff(path, fc.before, fc.after)
	return fc, nil
}

// planFile plans writing content to path.
func planFile(path string, content []byte, _ bool) (FileChange, error) {
	before, perm, err := readFile(path)
	if err != nil {
		return FileChange{}, err
	}
	fc := FileChange{Path: path, before: before, after: content, perm: perm}
	switch {
	case before != nil && bytes.Equal(before, content):
		fc.Action = Unchanged
	case before == nil:
		fc.Action = Created
	default:
		fc.Action = Updated
	}
	if fc.Action != Unchanged {
		fc.Diff = unifiedDiff(path, before, content)
	}
	return fc, nil
}

// planRemoveIfSame plans removing path when it holds exactly content.
func planRemoveIfSame(path string, content []byte) (FileChange, bool) {
	before, _, err := readFile(path)
	if err != nil || before == nil || !bytes.Equal(before, content) {
		return FileChange{}, false
	}
	return FileChange{Path: path, Action: Removed, before: before, Diff: unifiedDiff(path, before, nil), regenerable: true}, true
}

// readFile returns nil content for a missing file.
func readFile(path string) ([]byte, fs.FileMode, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if b == nil {
		b = []byte{}
	}
	return b, perm, nil
}

// apply backs up and writes every changed file.
func apply(o Options, res *Result) error {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	stamp := now().UTC().Format("20060102T150405Z")
	for i := range res.Files {
		fc := &res.Files[i]
		if fc.Action == Unchanged {
			continue
		}
		if fc.before != nil && !fc.regenerable {
			fc.Backup = backupName(fc.Path, stamp)
			if err := writeAtomic(fc.Backup, fc.before, fc.perm); err != nil {
				return fmt.Errorf("backup of %s: %w", fc.Path, err)
			}
		}
		if fc.Action == Removed {
			if err := os.Remove(fc.Path); err != nil {
				return err
			}
			removeEmptyDirs(filepath.Dir(fc.Path), 2)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(fc.Path), 0o755); err != nil {
			return err
		}
		if err := writeAtomic(fc.Path, fc.after, fc.perm); err != nil {
			return err
		}
	}
	return nil
}

// backupName is FILE.runtasks-<stamp>.bak, or with -N added when an
// earlier backup of the same second exists: a backup never overwrites one.
func backupName(path, stamp string) string {
	name := path + ".runtasks-" + stamp + ".bak"
	for n := 1; ; n++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s.runtasks-%s-%d.bak", path, stamp, n)
	}
}

// removeEmptyDirs removes dir and up to n-1 parents while they are empty.
func removeEmptyDirs(dir string, n int) {
	for range n {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// notes lists what is left to the user after an install.
func notes(o Options, settings string, tr *TrustReport, trErr error) []string {
	var out []string
	switch o.Agent {
	case hook.Codex:
		if !o.Global {
			out = append(out, fmt.Sprintf("Codex reads %s only in a trusted project: answer \"Trust this folder\" when Codex asks, or add [projects.%q] trust_level = \"trusted\" to %s.",
				settings, o.ProjectDir, filepath.Join(codexHome(o), "config.toml")))
		}
		switch {
		case o.DryRun:
			out = append(out, "Codex skips hooks until they are trusted; the install trusts them through `codex app-server` when codex is on PATH.")
		case tr != nil && trErr == nil:
			if len(tr.Trusted)+len(tr.Already) > 0 {
				out = append(out, fmt.Sprintf("Codex hooks trusted: %d now, %d already.", len(tr.Trusted), len(tr.Already)))
				break
			}
			fallthrough
		default:
			why := "codex was not found on PATH"
			if trErr != nil {
				why = "trusting them failed: " + trErr.Error()
			} else if tr != nil {
				why = "codex app-server listed none of them (is the project trusted?)"
			}
			out = append(out, "Codex skips untrusted hooks silently, and "+why+". Do one of: start `codex` in "+
				o.ProjectDir+" and choose \"Trust all and continue\" when it shows \"Hooks need review\"; or run `runtasks install codex` again once codex is on PATH; "+
				"or, for one run, `codex exec --dangerously-bypass-hook-trust …`.")
		}
	case hook.Gemini:
		out = append(out, "Gemini CLI runs hooks only while its hooks system is on: /settings → Advanced → \"Enable Hooks System\" (then restart gemini); /hooks panel lists the runtasks hooks.")
	case hook.Cursor:
		out = append(out, "Restart Cursor (or reload the window) so it reads "+settings+"; project hooks run in trusted workspaces only. Cursor's stop payload carries no final message, so <promise> tags and the done token are not seen: beads alone decides.")
	case hook.Claude:
		out = append(out, "Claude Code reads the hooks at start: restart running sessions. It ends a turn after 8 blocks in a row without a tool call (2.1.143+); CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises that cap.")
	}
	return out
}
