// Package install registers runtasks' hooks in an agent's settings file,
// writes the skills and a project.yaml, and takes it all out again. The
// file is edited in place (hujson), keeping comments and style; install
// records what it wrote so uninstall gives the file back byte for byte.
package install

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/hook"
)

// DefaultTimeout is every installed hook's timeout, and a stop hook's least.
const DefaultTimeout = 30 * time.Second

// Subcommands the installed hooks run.
const (
	StopHook    = "stop-hook"
	PromptHook  = "prompt-hook"
	SessionHook = "session-hook"
	PreToolHook = "pre-tool-hook"
)

// Skills are the embedded skills install writes for the agent.
var Skills = []string{"run-tasks", "completion-checklist"}

// Options says what to install where.
type Options struct {
	Agent string
	Epic  string // the stop hook's --epic ("" = the hook finds it)
	// Global installs into the user's settings instead of the project's.
	Global, DryRun bool
	// CodexHome is $CODEX_HOME ("" = Home/.codex).
	ProjectDir, Home, CodexHome string
	// Executable is the absolute runtasks path the user's (Global) hooks run.
	Executable string
	// StopTimeout is the stop hook's timeout (at least DefaultTimeout).
	StopTimeout time.Duration
	// LoopLimit is Cursor's loop_limit for the stop hook (0 = none).
	LoopLimit int
	// Trust trusts the installed Codex hooks (nil: no trust step).
	Trust func(ctx context.Context, settings string, isOurs func(command string) bool) (*TrustReport, error)
	// ManifestDir holds the install records ("" = Home/.local/state/runtasks/install).
	ManifestDir string
}

// TrustReport says what a Codex trust step did.
type TrustReport struct {
	Trusted, Already []string // hook keys trusted now / already
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
	Path, Action string
	Backup       string // where the old content was saved, once written
	Diff         string // the unified diff (dry runs only)

	target        string // path with its symlinks followed
	before, after []byte
	perm          fs.FileMode
	backup        bool // save before first
}

// Result is what Install or Uninstall did (or, in a dry run, would do).
type Result struct {
	Agent, Settings string
	Files           []FileChange
	Notes           []string // steps left to the user
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
	dir, file, skillsDir string // relative to the project or home
	events               []eventSpec
	// grouped: hooks.<Event> = [{matcher?, hooks:[handler]}]; else [handler] (Cursor).
	grouped bool
	scalars map[string]any // top-level members the file must hold
	// strict: the agent skips a file with comments or trailing commas
	// whole (Claude Code 2.1, Codex 0.169: docs/agents.md).
	strict bool
}

// Rejected reports whether agent skips its settings file data whole, for
// comments or trailing commas that install itself keeps.
func Rejected(agent string, data []byte) bool {
	return specs[agent].strict && len(bytes.TrimSpace(data)) > 0 && !json.Valid(data)
}

var specs = map[string]agentSpec{
	hook.Claude: {dir: ".claude", file: "settings.json", grouped: true, strict: true, skillsDir: ".claude/skills",
		events: []eventSpec{
			{hook.EventStop, StopHook, ""},
			// SubagentStop is allowed unless workflow.stop_hook.subagent_stop is drive.
			{hook.EventSubagentStop, StopHook, ""},
			{hook.EventPromptSubmit, PromptHook, ""},
			{hook.EventSessionStart, SessionHook, "startup|resume|clear|compact"},
			{hook.EventPreTool, PreToolHook, "Bash"},
		}},
	hook.Codex: {dir: ".codex", file: "hooks.json", grouped: true, strict: true, skillsDir: ".agents/skills",
		events: append(threeEvents("^(startup|resume|clear)$"), eventSpec{hook.EventPreTool, PreToolHook, "^Bash$"})},
	hook.Gemini: {dir: ".gemini", file: "settings.json", grouped: true, skillsDir: ".gemini/skills",
		events: append(threeEvents(""), eventSpec{hook.EventPreTool, PreToolHook, "^run_shell_command$"})},
	hook.Cursor: {dir: ".cursor", file: "hooks.json", skillsDir: ".cursor/skills", events: threeEvents(""),
		scalars: map[string]any{"version": 1}},
}

// threeEvents are the stop, prompt and session hooks.
func threeEvents(sessionMatcher string) []eventSpec {
	return []eventSpec{{hook.EventStop, StopHook, ""}, {hook.EventPromptSubmit, PromptHook, ""},
		{hook.EventSessionStart, SessionHook, sessionMatcher}}
}

// SettingsPath is the file install edits for agent: the project's or, with Global, the user's.
func SettingsPath(o Options) (string, error) {
	sp, ok := specs[o.Agent]
	if !ok {
		return "", fmt.Errorf("unknown agent %q (want %s)", o.Agent, strings.Join(hook.Agents, ", "))
	}
	switch {
	case o.Global && o.Agent == hook.Codex:
		return filepath.Join(codexHome(o), sp.file), nil
	case o.root() == "" && o.Global:
		return "", errors.New("no home directory")
	case o.root() == "":
		return "", errors.New("no project directory")
	}
	return filepath.Join(o.root(), sp.dir, sp.file), nil
}

func codexHome(o Options) string {
	return cmp.Or(o.CodexHome, filepath.Join(o.Home, ".codex"))
}

// Bare is the program a project's hooks run, from PATH.
const Bare = "runtasks"

// Command is the hook command for a subcommand. It runs Bare in a project's
// shared settings (so they work on every machine), Executable in the user's.
// Only the stop and pre-tool hooks name their agent and epic (the others
// detect the agent from their input).
func Command(o Options, sub string) string {
	prog := Bare
	if o.Global {
		prog = o.Executable
	}
	cmd := config.ShellQuote(prog) + " " + sub
	if sub == StopHook || sub == PreToolHook {
		cmd += " --agent " + o.Agent
		if o.Epic != "" {
			cmd += " --epic " + config.ShellQuote(o.Epic)
		}
	}
	return cmd
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
		why := ""
		switch {
		case o.DryRun:
			out = append(out, "Codex skips hooks until they are trusted; the install trusts them through `codex app-server` when codex is on PATH.")
		case trErr != nil:
			why = "trusting them failed: " + trErr.Error()
		case tr == nil:
			why = "codex was not found on PATH"
		case len(tr.Trusted)+len(tr.Already) == 0:
			why = "codex app-server listed none of them (is the project trusted?)"
		default:
			out = append(out, fmt.Sprintf("Codex hooks trusted: %d now, %d already.", len(tr.Trusted), len(tr.Already)))
		}
		if why != "" {
			out = append(out, "Codex skips untrusted hooks silently, and "+why+". Do one of: start `codex` in "+
				o.ProjectDir+" and choose \"Trust all and continue\" when it shows \"Hooks need review\"; or run `runtasks install codex` again once codex is on PATH; "+
				"or, for one run, `codex exec --dangerously-bypass-hook-trust …`.")
		}
	case hook.Gemini:
		trust := "Gemini CLI loads a project's hooks only in a trusted folder: trust it when gemini asks, or add it to ~/.gemini/trustedFolders.json ({\"" + o.ProjectDir + "\": \"TRUST_FOLDER\"}), or set GEMINI_CLI_TRUST_WORKSPACE=true (needed with -p, which cannot ask)."
		if o.Global {
			trust = "Gemini CLI runs user hooks in every folder; a project's own hooks only in a trusted one."
		}
		out = append(out, trust+" Gemini CLI before 0.27 also needs /settings → \"Enable Hooks System\". The /hooks panel lists the runtasks hooks.")
	case hook.Cursor:
		out = append(out, "Restart Cursor (or reload the window) so it reads "+settings+"; project hooks run in trusted workspaces only. Cursor's stop payload carries no final message, so <promise> tags and the done token are not seen: beads alone decides.")
	case hook.Claude:
		out = append(out, "Claude Code reads the hooks at start: restart running sessions. It ends a turn after 8 blocks in a row without a tool call (2.1.143+); CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises that cap.")
	}
	return out
}
