// Package install registers runtasks' hooks in an agent's settings file
// (Claude Code, Codex, Gemini CLI, Cursor), writes the skills and a
// project.yaml, and takes all of it out again without losing a byte of the
// user's settings:
//
//   - The file is edited, not rewritten (github.com/tailscale/hujson):
//     comments, key order, indentation and trailing commas stay; what
//     install adds is written in the file's own style.
//   - runtasks owns only what it wrote: install records each entry it adds
//     (the manifest, in the user's state directory); a later install
//     updates only those and uninstall removes exactly those, so install
//     then uninstall gives the file back byte for byte. A hook the user
//     wrote stays, even one that runs runtasks.
//   - A symlinked file is written through to its target, atomically. A
//     value of the wrong shape, invalid JSON or a read-only file is refused
//     with the file, line and key; nothing is changed then.
//   - One backup per settings file, in the install records' backups/
//     directory (never the project's work tree), written before the
//     change; shared files (project.yaml, skills) stay while any agent's
//     install still uses them.
//   - A project's hooks run runtasks from PATH (the file is committed and
//     shared); the user's run this machine's path. Entries another
//     machine's install wrote are replaced where they stand, never doubled.
package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/hook"
)

// DefaultTimeout is the timeout of every hook install writes, and the
// least a stop hook gets.
const DefaultTimeout = 30 * time.Second

// Subcommands the installed hooks run.
const (
	StopHook    = "stop-hook"
	PromptHook  = "prompt-hook"
	SessionHook = "session-hook"
)

var ourSubcommands = []string{StopHook, PromptHook, SessionHook}

// Skills are the embedded skills (prompts/skills/<name>/SKILL.md) that
// install writes for the agent.
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
	// Executable is the runtasks binary the user's hooks (Global) run: an
	// absolute path of this machine. A project's hooks run `runtasks` from
	// PATH (Program).
	Executable string
	// StopTimeout is the stop hook's timeout (Claude Code, Codex: whole
	// seconds; Gemini CLI: milliseconds); below DefaultTimeout (or 0) it is
	// DefaultTimeout. It should cover the configured command checks.
	StopTimeout time.Duration
	// LoopLimit is Cursor's loop_limit for the stop hook (0 = no limit:
	// runtasks' own cycle cap then holds).
	LoopLimit int
	// Trust trusts the installed Codex hooks (nil: no trust step; the
	// result says what the user must do).
	Trust func(ctx context.Context, settings string, isOurs func(command string) bool) (TrustReport, error)
	// ManifestDir holds the install records ("" =
	// Home/.local/state/runtasks/install).
	ManifestDir string
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
	// Backup is where the old content was saved; set only once the
	// backup is written.
	Backup string
	// Diff is the unified diff of the change (dry runs only).
	Diff string

	// target is the file written (path with its symlinks followed).
	target        string
	before, after []byte
	perm          fs.FileMode
	// backup: save before first; settings: the agent's settings file.
	backup, settings bool
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
	hook.Codex:  {dir: ".codex", file: "hooks.json", grouped: true, skillsDir: ".agents/skills", events: threeEvents("^(startup|resume|clear)$")},
	hook.Gemini: {dir: ".gemini", file: "settings.json", grouped: true, skillsDir: ".gemini/skills", events: threeEvents("")},
	hook.Cursor: {dir: ".cursor", file: "hooks.json", skillsDir: ".cursor/skills", events: threeEvents("")},
}

// threeEvents are the stop, prompt and session hooks; sessionMatcher is
// the session hook's matcher.
func threeEvents(sessionMatcher string) []eventSpec {
	return []eventSpec{{hook.EventStop, StopHook, ""}, {hook.EventPromptSubmit, PromptHook, ""},
		{hook.EventSessionStart, SessionHook, sessionMatcher}}
}

func unknownAgent(agent string) error {
	return fmt.Errorf("unknown agent %q (want %s)", agent, strings.Join(hook.Agents, ", "))
}

// SettingsPath is the file install edits for agent: the project's
// (.claude/settings.json, .codex/hooks.json, .gemini/settings.json,
// .cursor/hooks.json) or, with global, the user's (~/.claude/settings.json,
// $CODEX_HOME/hooks.json, ~/.gemini/settings.json, ~/.cursor/hooks.json).
func SettingsPath(o Options) (string, error) {
	sp, ok := specs[o.Agent]
	if !ok {
		return "", unknownAgent(o.Agent)
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

// Bare is the program a project's hooks run: runtasks, found on the PATH
// of the shell the agent runs its hooks in.
const Bare = "runtasks"

// Program is the program the hooks install writes run. A project's
// settings are committed and shared: they run Bare, so that one file
// works on every teammate's machine, wherever runtasks is installed there.
// The user's own settings (Global) run Executable, this machine's path.
func (o Options) Program() string {
	if o.Global {
		return o.Executable
	}
	return Bare
}

// Command is the hook command install writes for a subcommand. The stop
// hook names its agent (--agent) and epic; the prompt and session hooks
// tell the agent from its input (hook.Detect: Gemini's and Cursor's events
// are their own, and Claude Code and Codex take the same context output).
func Command(o Options, sub string) string {
	cmd := shellQuote(o.Program()) + " " + sub
	if sub == StopHook {
		cmd += " --agent " + o.Agent
		if o.Epic != "" {
			cmd += " --epic " + shellQuote(o.Epic)
		}
	}
	return cmd
}

func (o Options) check() error {
	if _, ok := specs[o.Agent]; !ok {
		return unknownAgent(o.Agent)
	}
	if o.Global && !filepath.IsAbs(o.Executable) {
		return fmt.Errorf("the runtasks binary must be an absolute path, not %q", o.Executable)
	}
	if strings.ContainsAny(o.Epic, "\n\r\x00") {
		return errors.New("epic id holds a line break")
	}
	return nil
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
		if o.Global {
			out = append(out, "Gemini CLI runs user hooks in every folder; a project's own hooks only in a trusted one. Gemini CLI before 0.27 also needs /settings → \"Enable Hooks System\". The /hooks panel lists the runtasks hooks.")
			break
		}
		out = append(out, "Gemini CLI loads a project's hooks only in a trusted folder: trust it when gemini asks, or add it to ~/.gemini/trustedFolders.json ({\""+o.ProjectDir+"\": \"TRUST_FOLDER\"}), or set GEMINI_CLI_TRUST_WORKSPACE=true (needed with -p, which cannot ask). Gemini CLI before 0.27 also needs /settings → \"Enable Hooks System\". The /hooks panel lists the runtasks hooks.")
	case hook.Cursor:
		out = append(out, "Restart Cursor (or reload the window) so it reads "+settings+"; project hooks run in trusted workspaces only. Cursor's stop payload carries no final message, so <promise> tags and the done token are not seen: beads alone decides.")
	case hook.Claude:
		out = append(out, "Claude Code reads the hooks at start: restart running sessions. It ends a turn after 8 blocks in a row without a tool call (2.1.143+); CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises that cap.")
	}
	return out
}
