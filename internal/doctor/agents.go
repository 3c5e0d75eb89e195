package doctor

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/install"
	"github.com/runtasks/runtasks/internal/shell"
)

// EnvBlockCap is Claude Code's cap on consecutive Stop-hook blocks.
const EnvBlockCap = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"

// runtasksMain is runtasks' main package, as a Go binary's build
// information names it.
const runtasksMain = "github.com/runtasks/runtasks/cmd/runtasks"

// agentSettings is one agent's project and user settings files, read once
// for the epic, agent, block-cap and timeout checks.
type agentSettings struct {
	files []settingsFile
	// entries are runtasks' hook entries in the files; found names each
	// file that has some, with their count.
	entries []install.Entry
	found   []string
	// bad is the first file that could not be read or parsed (then there
	// are no entries).
	bad *Finding
}

type settingsFile struct {
	path string
	data []byte
}

func readSettings(in *Inputs, agent string) agentSettings {
	var s agentSettings
	for _, global := range []bool{false, true} {
		path, err := install.SettingsPath(install.Options{Agent: agent, Global: global, ProjectDir: in.Root, Home: in.Home, CodexHome: in.CodexHome})
		if err != nil {
			continue
		}
		data, err := in.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			if s.bad == nil {
				s.bad = &Finding{Error, agent, oneLine(err), "make " + path + " readable"}
			}
			continue
		}
		s.files = append(s.files, settingsFile{path, data})
		if s.bad != nil {
			continue
		}
		es, err := install.Entries(agent, data)
		if err != nil {
			s.bad = &Finding{Error, agent, path + " is not valid JSON: " + oneLine(err), "correct the file (" + agent + " ignores it too)"}
			continue
		}
		if len(es) > 0 {
			s.found = append(s.found, fmt.Sprintf("%s (%d)", path, len(es)))
			s.entries = append(s.entries, es...)
		}
	}
	if s.bad != nil {
		s.entries, s.found = nil, nil
	}
	return s
}

// checkAgent checks runtasks' entries in an agent's settings; n counts
// them. Each entry's program must be runtasks: one that is missing or is
// something else leaves the agent without runtasks' hooks, an error;
// another runtasks (another path, perhaps another version) is a warning.
func checkAgent(in *Inputs, agent string, s agentSettings) (f Finding, n int) {
	if s.bad != nil {
		return *s.bad, 0
	}
	var bad, foreign []string
	seen := map[string]bool{}
	for _, e := range s.entries {
		if seen[e.Program] {
			continue
		}
		seen[e.Program] = true
		same, problem, version := hookProgram(in, e.Program)
		switch {
		case problem != "":
			bad = append(bad, e.Program+" "+problem)
		case !same:
			foreign = append(foreign, fmt.Sprintf("%s (runtasks %s)", e.Program, version))
		}
	}
	n = len(s.entries)
	fix := "runtasks install " + agent
	found := strings.Join(s.found, ", ")
	switch {
	case n == 0:
		return Finding{OK, agent, "not installed", ""}, 0
	case len(bad) > 0:
		return Finding{Error, agent, fmt.Sprintf("%s: the hooks cannot run runtasks: %s", found, strings.Join(bad, "; ")),
			fix + " (--global for the user's settings) writes this binary, " + in.Executable + ", into the entries"}, n
	case len(foreign) > 0:
		return Finding{Warning, agent, fmt.Sprintf("%s run %s, not this binary (%s, runtasks %s)", found, strings.Join(foreign, ", "), in.Executable, ownVersion()), fix + " (replaces the entries)"}, n
	}
	return Finding{OK, agent, "installed: " + found + ", running this binary", ""}, n
}

// hookProgram checks program, the first word of a hook's command (looked
// up on PATH when it has no slash). same: it is this binary. problem says
// why it is not a runtasks that can answer the hook ("" when it is one).
// A file is runtasks when its Go build information, read from the file
// without running it, names runtasksMain as its main package; a script,
// /bin/true or another Go program does not. version is that runtasks'
// module version ("(devel)" for a build from a checkout).
func hookProgram(in *Inputs, program string) (same bool, problem, version string) {
	path := program
	if !strings.ContainsRune(path, filepath.Separator) {
		if path = in.LookPath(program); path == "" {
			return false, "is not found on PATH", ""
		}
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	if path == in.Executable {
		return true, "", ""
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, "is missing", ""
	case err != nil:
		return false, "cannot be read: " + oneLine(err), ""
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return false, "is not an executable file", ""
	}
	bi, err := buildinfo.ReadFile(path)
	switch {
	case err != nil:
		return false, "is not runtasks (not a Go program)", ""
	case bi.Path != runtasksMain:
		return false, "is not runtasks (a Go program of " + bi.Path + ")", ""
	}
	return false, "", bi.Main.Version
}

// ownVersion is this runtasks' module version ("unknown" without build
// information).
func ownVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return "unknown"
}

// checkBlockCap compares Claude Code's consecutive-block cap, from the
// environment or the "env" of Claude Code's settings, with max_cycles.
func checkBlockCap(in *Inputs, cfg *config.Config, claude agentSettings, installed bool) Finding {
	maxCycles := cfg.Workflow.StopHook.MaxCycles
	val, src := in.Getenv(EnvBlockCap), "environment"
	for _, f := range claude.files {
		if val != "" {
			break
		}
		var s struct {
			Env map[string]any `json:"env"`
		}
		if json.Unmarshal(f.data, &s) == nil {
			if v, ok := s.Env[EnvBlockCap]; ok {
				val, src = fmt.Sprint(v), f.path
			}
		}
	}
	fix := fmt.Sprintf("export %s=%d (or 0 for none; runtasks' max_cycles then caps), or set it in the env of .claude/settings.json", EnvBlockCap, max(maxCycles, 1))
	if val == "" {
		if !installed {
			return Finding{OK, "block-cap", EnvBlockCap + " unset (Claude Code not installed)", ""}
		}
		return Finding{Warning, "block-cap", fmt.Sprintf("%s unset: Claude Code (2.1.143+) ends a turn after 8 blocks in a row without a tool call, below max_cycles %d", EnvBlockCap, maxCycles), fix}
	}
	n, err := strconv.Atoi(strings.TrimSpace(val))
	switch {
	case err != nil || n < 0:
		return Finding{Warning, "block-cap", fmt.Sprintf("%s=%q (%s) is not a number", EnvBlockCap, val, src), fix}
	case n == 0 && maxCycles == 0:
		return Finding{Warning, "block-cap", fmt.Sprintf("%s=0 (%s) and max_cycles 0: nothing caps the loop", EnvBlockCap, src), "set workflow.stop_hook.max_cycles"}
	case n == 0:
		return Finding{OK, "block-cap", fmt.Sprintf("%s=0 (%s): off; max_cycles %d caps the loop", EnvBlockCap, src, maxCycles), ""}
	case maxCycles > 0 && n < maxCycles:
		return Finding{Warning, "block-cap", fmt.Sprintf("%s=%d (%s) is below max_cycles %d", EnvBlockCap, n, src, maxCycles), fix}
	}
	return Finding{OK, "block-cap", fmt.Sprintf("%s=%d (%s), max_cycles %d", EnvBlockCap, n, src, maxCycles), ""}
}

// baseHookTimeout covers a stop hook without command checks: bd's queries
// (each bounded by beads.timeout) and the state.
const baseHookTimeout = 30 * time.Second

// HookTimeout is the Stop hook timeout that covers the configured checks:
// the command checks may all run, one after the other, each up to its
// timeout and the runner's grace, on top of the base for bd and the state.
// install writes it; doctor compares the installed timeouts with it. An
// agent kills a hook that outlives its timeout, and then the stop is
// decided by nobody.
func HookTimeout(cfg *config.Config) time.Duration {
	var sum time.Duration
	var walk func(specs []config.CheckSpec)
	walk = func(specs []config.CheckSpec) {
		for _, sp := range specs {
			switch sp.Type {
			case "command":
				d := sp.Timeout
				if d <= 0 {
					d = config.DefaultCheckTimeout
				}
				sum += d + shell.DefaultGrace
			case "composite":
				walk(sp.Checks)
			}
		}
	}
	if cfg != nil {
		walk(cfg.Workflow.Checks)
	}
	return (baseHookTimeout + sum).Round(time.Second)
}

// stopHookTimeouts reads the timeouts of runtasks' stop-hook entries in an
// agent's settings file (Claude Code and Codex: seconds; Gemini CLI:
// milliseconds; Cursor has none). An entry without one is 0.
func stopHookTimeouts(agent string, data []byte) []time.Duration {
	unit := time.Second
	switch agent {
	case hook.Gemini:
		unit = time.Millisecond
	case hook.Cursor:
		return nil
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []time.Duration
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if strings.Contains(h.Command, "runtasks") && strings.Contains(h.Command, " stop-hook") {
					out = append(out, time.Duration(h.Timeout*float64(unit)))
				}
			}
		}
	}
	return out
}

// checkTimeouts checks that every installed stop hook's timeout covers the
// configured checks (HookTimeout).
func checkTimeouts(cfg *config.Config, settings map[string]agentSettings) Finding {
	need := HookTimeout(cfg)
	var short []string
	n := 0
	for _, agent := range hook.Agents {
		for _, f := range settings[agent].files {
			for _, d := range stopHookTimeouts(agent, f.data) {
				n++
				if d > 0 && d < need {
					short = append(short, fmt.Sprintf("%s (%s)", f.path, d))
				}
			}
		}
	}
	switch {
	case n == 0:
		return Finding{OK, "timeout", "no stop hook installed", ""}
	case len(short) > 0:
		return Finding{Warning, "timeout",
			fmt.Sprintf("stop hook timeout below the %s the checks need: %s; the agent kills the hook mid-check and the stop is decided by nobody", need, strings.Join(short, ", ")),
			fmt.Sprintf(`set "timeout" of the runtasks stop-hook entry to %d (seconds; Gemini CLI: %d ms), or lower the command checks' timeout`, int(need/time.Second), need.Milliseconds())}
	}
	return Finding{OK, "timeout", fmt.Sprintf("every stop hook's timeout covers the checks (%s)", need), ""}
}
