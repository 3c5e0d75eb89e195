package doctor

import (
	"bytes"
	"cmp"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
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

// agentSettings is one agent's settings files, read once for all checks.
type agentSettings struct {
	files   []settingsFile
	entries []fileEntry // every file's, in order
	found   []string    // files with entries, with their count
	// bad is the first unreadable file: the agent's hooks then count as
	// not installed, but for the stop hooks' checks (the files read before).
	bad *Finding
}

type settingsFile struct {
	path string
	data []byte
	user bool // the user's own file, not the project's shared one
}

// fileEntry is a runtasks hook and the file holding it.
type fileEntry struct {
	install.Entry
	settingsFile
}

// readSettings reads the files the agent reads hooks from for the project.
func readSettings(in *Inputs, agent string) agentSettings {
	var s agentSettings
	for _, global := range []bool{false, true} {
		path, err := install.SettingsPath(install.Options{Agent: agent, Global: global, ProjectDir: in.Root, Home: in.Home, CodexHome: in.CodexHome})
		if err != nil {
			continue
		}
		s.read(in, agent, path, global)
		if agent == hook.Claude && !global {
			s.read(in, agent, filepath.Join(in.Root, ".claude", "settings.local.json"), true)
		}
	}
	return s
}

func (s *agentSettings) read(in *Inputs, agent, path string, user bool) {
	data, err := in.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return
	case err != nil:
		if s.bad == nil {
			s.bad = &Finding{Error, agent, oneLine(err), "make " + path + " readable"}
		}
		return
	}
	f := settingsFile{path: path, data: data, user: user}
	if s.bad == nil {
		es, err := install.Entries(agent, data)
		if err == nil && install.Rejected(agent, data) {
			err = errors.New("comments or trailing commas")
		}
		if err != nil {
			s.bad = &Finding{Error, agent, path + " is not valid JSON: " + oneLine(err), "correct the file (" + agent + " ignores it too)"}
		} else if len(es) > 0 {
			s.found = append(s.found, fmt.Sprintf("%s (%d)", path, len(es)))
		}
		for _, e := range es {
			s.entries = append(s.entries, fileEntry{e, f})
		}
	}
	s.files = append(s.files, f)
}

// checkAgent checks that each runtasks entry runs this runtasks.
func checkAgent(in *Inputs, agent string, s agentSettings) Finding {
	if s.bad != nil {
		return *s.bad
	}
	var problems, fixes []string
	seen := map[string]bool{}
	for _, e := range s.entries {
		key := fmt.Sprint(e.user, e.Program)
		if seen[key] {
			continue
		}
		seen[key] = true
		problem := hookProgram(in, e.Program)
		if p := e.Program + " " + problem; problem != "" && !slices.Contains(problems, p) {
			problems = append(problems, p)
		}
		if fix := programFix(in, agent, e.settingsFile, e.Program); problem != "" && !slices.Contains(fixes, fix) {
			fixes = append(fixes, fix)
		}
	}
	found := strings.Join(s.found, ", ")
	switch {
	case len(s.entries) == 0:
		return Finding{OK, agent, "not installed", ""}
	case len(problems) > 0:
		return Finding{Error, agent, fmt.Sprintf("%s: the hooks do not run this runtasks: %s", found, strings.Join(problems, "; ")), strings.Join(fixes, "; ")}
	}
	return Finding{OK, agent, "installed: " + found + ", running this runtasks", ""}
}

func programFix(in *Inputs, agent string, file settingsFile, program string) string {
	dir := filepath.Dir(in.Executable)
	switch {
	case !strings.ContainsRune(program, filepath.Separator):
		return fmt.Sprintf("put this runtasks first on the PATH the agent starts with (export PATH=%s:$PATH), or install it there (go install github.com/runtasks/runtasks/cmd/runtasks@latest)", dir)
	case !file.user:
		return "runtasks install " + agent + " (the project's entries then call runtasks from PATH)"
	case filepath.Base(file.path) == "settings.local.json":
		return "correct or remove the entry in " + file.path + " (runtasks install writes none there)"
	}
	return "runtasks install " + agent + " --global (writes this runtasks, " + in.Executable + ", into " + file.path + ")"
}

// hookProgram says why a hook's program is not this runtasks ("": it is):
// missing, no runtasks (by its Go build info), or another runtasks.
func hookProgram(in *Inputs, program string) string {
	path := program
	if !strings.ContainsRune(path, filepath.Separator) {
		if path = in.LookPath(program); path == "" {
			return "is not found on PATH"
		}
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	if path == in.Executable {
		return ""
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "is missing"
	case err != nil:
		return "cannot be read: " + oneLine(err)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "is not an executable file"
	}
	bi, err := buildinfo.ReadFile(path)
	switch {
	case err != nil:
		return "is not runtasks (not a Go program)"
	case bi.Path != runtasksMain:
		return "is not runtasks (a Go program of " + bi.Path + ")"
	case sameFile(path, in.Executable):
		return ""
	}
	other := buildName(bi)
	if program != path {
		other += " at " + path
	}
	own := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		own = buildName(bi)
	}
	return fmt.Sprintf("is another runtasks (%s), not this one (%s, %s)", other, in.Executable, own)
}

// sameFile reports whether two files hold the same bytes (the same build).
func sameFile(a, b string) bool {
	x, err := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err == nil && err2 == nil && bytes.Equal(x, y)
}

// buildName is a runtasks build's module version and VCS revision.
func buildName(bi *debug.BuildInfo) string {
	v := "runtasks " + bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			v += " " + s.Value
		}
	}
	return v
}

// checkDoubleStop finds two different runtasks stop hooks firing at one
// stop (Claude Code dedupes identical commands; the others do not).
func checkDoubleStop(agent string, s agentSettings) []Finding {
	event := hook.NativeEvent(agent, hook.EventStop)
	var cmds, where []string
	user := false
	for _, e := range s.entries {
		if e.Event != event || !strings.Contains(e.Command, install.StopHook) {
			continue
		}
		if agent == hook.Claude && slices.Contains(cmds, e.Command) {
			continue
		}
		cmds, where = append(cmds, e.Command), append(where, e.path+": "+e.Command)
		user = user || e.user
	}
	if len(cmds) < 2 {
		return nil
	}
	fix := "runtasks install " + agent + " (keeps one set in the project's file)"
	if user {
		fix = "remove all but one: runtasks uninstall " + agent + " --global takes out the user's (or edit the files named)"
	}
	return []Finding{{Error, agent, fmt.Sprintf("%d runtasks stop hooks fire at each stop (%s): each stop is judged by both, and a stale one may drive another epic",
		len(cmds), strings.Join(where, "; ")), fix}}
}

// checkFires finds project hooks that will not fire from the working
// directory: Claude Code and Gemini CLI read settings from their start dir.
func checkFires(in *Inputs, agent string, s agentSettings) []Finding {
	if (agent != hook.Claude && agent != hook.Gemini) || in.Wd == "" || in.Wd == in.Root || len(s.entries) == 0 || s.bad != nil {
		return nil
	}
	project, _ := install.SettingsPath(install.Options{Agent: agent, ProjectDir: in.Root})
	here, _ := install.SettingsPath(install.Options{Agent: agent, ProjectDir: in.Wd})
	var inProject, elsewhere bool
	for _, e := range s.entries {
		switch {
		case e.path == project:
			inProject = true
		case e.user && filepath.Base(e.path) != "settings.local.json":
			elsewhere = true
		}
	}
	var wd agentSettings // the settings the agent reads here
	wd.read(in, agent, here, true)
	if !inProject || elsewhere || len(wd.entries) > 0 {
		return nil
	}
	name := map[string]string{hook.Claude: "Claude Code", hook.Gemini: "Gemini CLI"}[agent]
	return []Finding{{Error, agent, fmt.Sprintf("%s started here (%s) reads %s, not the project's %s: runtasks' hooks will not fire", name, in.Wd, here, project),
		fmt.Sprintf("start %s at the project root (cd %s), or install the hooks for this user: runtasks install %s --global", agent, config.ShellQuote(in.Root), agent)}}
}

// checkBlockCap compares Claude Code's consecutive-block cap, from the
// environment or the "env" of Claude Code's settings, with max_cycles.
func checkBlockCap(in *Inputs, cfg *config.Config, claude agentSettings) Finding {
	maxCycles := cfg.Workflow.StopHook.MaxCycles
	val, src := config.LookupEnv(in.Environ, EnvBlockCap), "environment"
	for _, f := range claude.files {
		if val != "" {
			break
		}
		var s struct {
			Env map[string]any `json:"env"`
		}
		_ = json.Unmarshal(f.data, &s) // a file that is not JSON leaves Env nil
		if v, ok := s.Env[EnvBlockCap]; ok {
			val, src = fmt.Sprint(v), f.path
		}
	}
	fix := fmt.Sprintf("export %s=%d (or 0 for none; runtasks' max_cycles then caps), or set it in the env of .claude/settings.json", EnvBlockCap, max(maxCycles, 1))
	if val == "" {
		if len(claude.entries) == 0 || claude.bad != nil {
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

// HookTimeout is the Stop hook timeout covering every command check in
// sequence plus install.DefaultTimeout, which covers bd's queries (each
// bounded by beads.timeout) and the state; an agent kills a hook that
// outlives it. The stop audit runs workflow.verify's checks for up to
// max_per_stop tasks.
func HookTimeout(cfg *config.Config) time.Duration {
	var sum time.Duration
	if cfg != nil {
		v := cfg.Workflow.Verify
		sum = commandTime(cfg.Workflow.Checks) + commandTime(v.Checks)*time.Duration(max(v.MaxPerStop, 1))
	}
	return (install.DefaultTimeout + sum).Round(time.Second)
}

// commandTime is the most the command checks among specs take in sequence.
func commandTime(specs []config.CheckSpec) (sum time.Duration) {
	for _, sp := range specs {
		switch sp.Type {
		case "command":
			sum += cmp.Or(sp.Timeout, config.DefaultCheckTimeout) + shell.DefaultGrace
		case "composite":
			sum += commandTime(sp.Checks)
		}
	}
	return sum
}

// checkTimeouts checks that every installed stop hook's timeout covers the
// configured checks (HookTimeout).
func checkTimeouts(cfg *config.Config, settings map[string]agentSettings) Finding {
	need := HookTimeout(cfg)
	var short []string
	n := 0
	for _, agent := range hook.Agents {
		for _, e := range settings[agent].entries {
			if agent == hook.Cursor || !strings.Contains(e.Command, install.StopHook) {
				continue
			}
			n++
			if e.Timeout > 0 && e.Timeout < need {
				short = append(short, fmt.Sprintf("%s (%s)", e.path, e.Timeout))
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
