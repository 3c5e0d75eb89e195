package main

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/install"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/trust"
)

// Check levels.
const (
	levelOK      = "ok"
	levelWarning = "warning"
	levelError   = "error"
)

// testedBD is the bd version runtasks is tested with.
const testedBD = "1.3.0"

// envBlockCap is Claude Code's cap on consecutive Stop-hook blocks.
const envBlockCap = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"

type doctorCheck struct {
	Level, Name, Msg, Fix string
}

type doctorOptions struct {
	Out io.Writer
	// Cfg is nil when the configuration did not load (CfgErr says why).
	Cfg    *config.Config
	CfgErr error
	// Root is the project root (found even when the configuration is bad).
	Root string
	// Environ applies to the defaults used when project.yaml does not load.
	Environ []string
	Home    string
	// CodexHome is $CODEX_HOME ("" = Home/.codex).
	CodexHome string
	// Executable is this runtasks binary (what install writes); Getenv and
	// LookPath read the factory's environment.
	Executable string
	Getenv     func(string) string
	LookPath   func(string) string
	Beads      func(cfg *config.Config) *beads.Client
	// Trust is the user's trust store (nil: it could not be found, TrustErr
	// says why).
	Trust    *trust.Store
	TrustErr error
}

func newDoctorCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that runtasks, bd, the project and the agents fit together",
		Long: `doctor runs its checks one after the other and prints one line for each:
ok, warning or error, and for problems the fix.

  bd          bd found, and its version (runtasks is tested with bd ` + testedBD + `)
  store       the beads store found and readable
  epic        the configured epic exists (workflow.epic, RUNTASKS_EPIC, --epic);
              with none configured, each epic the installed stop hooks pass
              (runtasks install AGENT --epic E)
  server      where the store lives: embedded, or on a Dolt SQL server, and
              whether that server answers (docs/scale.md)
  config      project.yaml valid
  trust       whether the hooks read project.yaml: trusted, untrusted, or
              changed since trusted (runtasks trust)
  AGENT       for claude, codex, gemini and cursor: whether runtasks' hooks are
              installed (project and user settings) and run this binary;
              an error when a hook's program is missing or is not runtasks
              (its Go build information, read from the file, names another
              main package than cmd/runtasks), a warning when it is another
              runtasks
  block-cap   Claude Code's cap on consecutive Stop-hook blocks
              (` + envBlockCap + `) against workflow.stop_hook.max_cycles
  timeout     each installed stop hook's timeout against what the command
              checks need (their timeouts in a row, plus 30 s for bd)
  state       the state directory is writable (creating it writes its
              .gitignore)
  runs        whether git tracks the runs folder (claim.runs_dir), ignores
              it, or shows it in git status: run folders are not meant to
              be committed

bd is asked at most three times (version, the epic, the server), one
query after the other.`,
		Example: `  runtasks doctor
  runtasks doctor --epic bd-x7y8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := &doctorOptions{Out: f.Out, Getenv: f.Getenv, Environ: f.Environ()}
			wd, err := f.Getwd()
			if err != nil {
				return exitCode(1, err)
			}
			configFile, _ := cmd.Flags().GetString("config")
			o.Root, _, _ = f.findProject(configFile, wd)
			if o.Root == "" {
				o.Root = wd
			}
			o.Cfg, _, o.CfgErr = f.LoadConfig(cmd, wd)
			o.Home = f.Getenv("HOME")
			if o.Home == "" {
				o.Home, _ = os.UserHomeDir()
			}
			o.CodexHome = f.Getenv("CODEX_HOME")
			if exe, err := f.Executable(); err == nil {
				if r, err := filepath.EvalSymlinks(exe); err == nil {
					exe = r
				}
				o.Executable = exe
			}
			o.LookPath = func(name string) string { return lookPathIn(f.Getenv("PATH"), name) }
			o.Beads = func(cfg *config.Config) *beads.Client { return newBeadsClient(f, cfg) }
			o.Trust, o.TrustErr = f.trustStore()
			if failed := runDoctor(cmd.Context(), o); failed {
				return exitCode(engine.ExitUsage, errSilent)
			}
			return nil
		},
	}
	cmd.Flags().String("epic", "", "epic to check (env RUNTASKS_EPIC, workflow.epic)")
	cmd.Flags().String("bd", "", "bd binary (env RUNTASKS_BD, beads.bin)")
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, `  0  no check failed (warnings allowed)
  1  doctor itself could not run (no working directory)
  4  setup error: at least one check is an error (its fix is printed)`)
	return cmd
}

// runDoctor prints every check and reports whether one is an error.
func runDoctor(ctx context.Context, o *doctorOptions) bool {
	failed := false
	emit := func(c doctorCheck) {
		line := fmt.Sprintf("%-7s %-9s %s", c.Level, c.Name, c.Msg)
		if c.Fix != "" && c.Level != levelOK {
			line += " — fix: " + c.Fix
		}
		fmt.Fprintln(o.Out, line)
		if c.Level == levelError {
			failed = true
		}
	}
	cfg := o.Cfg
	if cfg == nil {
		// The rest of the checks still run, on the defaults.
		emit(doctorCheck{levelError, "config", "configuration: " + oneLine(o.CfgErr), "correct the project.yaml or the variable it names (runtasks config show lists the keys)"})
		var err error
		cfg, err = defaultConfig(o.Root, o.Environ)
		if err != nil {
			return true
		}
	}

	// bd and the store.
	bdOK := false
	client := o.Beads(cfg)
	bin := cfg.Beads.Bin
	if bin == "" {
		bin = "bd"
	}
	path := bin
	if !strings.ContainsRune(bin, filepath.Separator) {
		path = o.LookPath(bin)
	}
	if path == "" {
		emit(doctorCheck{levelError, "bd", fmt.Sprintf("%s not found on PATH", bin), "install bd " + testedBD + " (make bd builds it into .tools/bin) or set beads.bin / RUNTASKS_BD"})
	} else if v, err := client.Version(ctx); err != nil {
		emit(doctorCheck{levelError, "bd", fmt.Sprintf("%s: %s", path, oneLine(err)), "check that " + path + " is bd (bd version --json)"})
	} else if v != testedBD {
		bdOK = true
		emit(doctorCheck{levelWarning, "bd", fmt.Sprintf("bd %s at %s; runtasks is tested with %s", v, path, testedBD), "use bd " + testedBD + " if bd's JSON differs"})
	} else {
		bdOK = true
		emit(doctorCheck{levelOK, "bd", fmt.Sprintf("bd %s at %s", v, path), ""})
	}

	store := cfg.BeadsDir()
	if store == "" {
		store = findBeadsDir(cfg.Root)
	}
	switch {
	case store == "":
		emit(doctorCheck{levelError, "store", "no .beads store in " + cfg.Root + " or above", "bd init in the project, or set beads.dir / BEADS_DIR"})
	default:
		if _, err := os.ReadDir(store); err != nil {
			emit(doctorCheck{levelError, "store", oneLine(err), "make " + store + " readable"})
		} else {
			emit(doctorCheck{levelOK, "store", store, ""})
		}
	}

	emit(doctorServer(ctx, client, bdOK && store != ""))

	// runtasks' hooks in each agent's settings, read once for the epic and
	// agent checks.
	settings := make(map[string]doctorSettings, len(hook.Agents))
	for _, agent := range hook.Agents {
		settings[agent] = doctorEntries(o, agent)
	}
	if epic := cfg.Workflow.Epic; epic != "" {
		emit(doctorEpic(ctx, client, epic, "", bdOK && store != ""))
	} else if hooked := doctorHookEpics(settings); len(hooked) == 0 {
		emit(doctorCheck{levelOK, "epic", "none configured: the hooks drive only sessions given one (--epic, RUNTASKS_EPIC, an armed session)", ""})
	} else {
		epics := make([]string, 0, len(hooked))
		for e := range hooked {
			epics = append(epics, e)
		}
		slices.Sort(epics)
		for _, e := range epics {
			emit(doctorEpic(ctx, client, e, "passed by the "+strings.Join(hooked[e], ", ")+" hooks' --epic", bdOK && store != ""))
		}
	}

	if o.Cfg != nil {
		if cfg.File == "" {
			emit(doctorCheck{levelWarning, "config", "no project.yaml: the defaults apply", "runtasks install AGENT writes one, or copy project.yaml.example"})
		} else {
			emit(doctorCheck{levelOK, "config", cfg.File + " is valid", ""})
		}
	}
	emit(doctorTrust(o))

	// Agents.
	claudeInstalled := false
	for _, agent := range hook.Agents {
		c, n := doctorAgent(o, agent, settings[agent])
		if agent == hook.Claude && n > 0 {
			claudeInstalled = true
		}
		emit(c)
	}
	emit(doctorBlockCap(o, cfg, claudeInstalled))
	emit(doctorHookTimeout(o, cfg))

	// State dir.
	dir := cfg.StateDir()
	if err := state.EnsureStateDir(dir); err != nil {
		emit(doctorCheck{levelError, "state", oneLine(err), "make " + dir + " writable or set state.dir / RUNTASKS_STATE_DIR"})
	} else if f, err := os.CreateTemp(dir, ".doctor-*"); err != nil {
		emit(doctorCheck{levelError, "state", dir + " is not writable: " + oneLine(err), "make " + dir + " writable or set state.dir / RUNTASKS_STATE_DIR"})
	} else {
		f.Close()
		os.Remove(f.Name())
		emit(doctorCheck{levelOK, "state", dir + " is writable", ""})
	}
	emit(doctorRuns(ctx, cfg))
	return failed
}

// doctorTrust says whether the hooks read the project's project.yaml.
func doctorTrust(o *doctorOptions) doctorCheck {
	if f := o.Getenv(config.EnvConfig); f != "" {
		return doctorCheck{levelOK, "trust", config.EnvConfig + " names " + f + ": the hooks read it as named", ""}
	}
	file := filepath.Join(o.Root, config.ProjectFile)
	if _, err := os.Stat(file); err != nil {
		return doctorCheck{levelOK, "trust", "no project.yaml in " + o.Root + ": nothing to trust", ""}
	}
	fix := "review " + file + ", then run `runtasks trust " + config.ShellQuote(o.Root) + "`"
	if o.Trust == nil {
		return doctorCheck{levelWarning, "trust", "no trust store (" + oneLine(o.TrustErr) + "): the hooks ignore " + file, "set HOME or XDG_CONFIG_HOME"}
	}
	st, err := trustState(o.Trust, o.Root, file)
	switch {
	case err != nil:
		return doctorCheck{levelWarning, "trust", oneLine(err) + ": the hooks ignore " + file, fix}
	case st == trust.Trusted:
		return doctorCheck{levelOK, "trust", o.Root + " is trusted: the hooks read " + file, ""}
	}
	return doctorCheck{levelWarning, "trust", file + " is " + st.String() + ": the hooks ignore it (defaults, environment and flags only)", fix}
}

// doctorServer says where the store lives (embedded, or on a Dolt SQL
// server) and, in server mode, whether the server answers (bd dolt show).
func doctorServer(ctx context.Context, client *beads.Client, ready bool) doctorCheck {
	if !ready {
		return doctorCheck{levelWarning, "server", "not checked (bd or the store is missing)", "fix the lines above"}
	}
	st, err := client.Server(ctx)
	switch {
	case err != nil:
		return doctorCheck{levelError, "server", "bd dolt show: " + oneLine(err), "run bd dolt show to see bd's error"}
	case st.Mode == beads.ModeEmbedded:
		return doctorCheck{levelOK, "server", "embedded store (Dolt inside each bd process; one machine)", ""}
	}
	where := fmt.Sprintf("Dolt SQL server %s:%d, database %s, user %s", st.Host, st.Port, st.Database, st.User)
	if st.TLS {
		where += ", TLS"
	}
	if !st.Answers {
		return doctorCheck{levelError, "server", "server mode: " + where + ": does not answer",
			"start the server (docs/scale.md), or correct BEADS_DOLT_SERVER_HOST / BEADS_DOLT_SERVER_PORT / BEADS_DOLT_PASSWORD; bd dolt test checks it"}
	}
	return doctorCheck{levelOK, "server", "server mode: " + where + ": answers", ""}
}

// doctorRuns says whether git tracks the runs folder, ignores it, or would
// show it in git status.
func doctorRuns(ctx context.Context, cfg *config.Config) doctorCheck {
	dir := cfg.Claim.RunsDir
	if dir == "" {
		dir = "runs"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cfg.Root, dir)
	}
	rel := relTo(cfg.Root, dir)
	repo := git.Repo{Dir: cfg.Root}
	tracked, err := repo.Tracked(ctx, rel)
	if err != nil {
		if strings.Contains(err.Error(), "not a git repository") {
			return doctorCheck{levelOK, "runs", rel + ": not in a git work tree", ""}
		}
		return doctorCheck{levelWarning, "runs", "git could not tell whether " + rel + " is tracked: " + oneLine(err), ""}
	}
	if n := len(tracked); n > 0 {
		return doctorCheck{levelWarning, "runs", fmt.Sprintf("%s: %d file(s) tracked by git; run folders are the agent's scratch record, not meant to be committed", rel, n),
			"git rm -r --cached " + rel + " (the files stay on disk), then commit"}
	}
	if _, err := os.Stat(dir); err != nil {
		return doctorCheck{levelOK, "runs", rel + " not created yet (runtasks writes " + filepath.Join(rel, ".gitignore") + " when it creates it)", ""}
	}
	ignored, err := repo.Ignored(ctx, filepath.Join(rel, "run-doctor-probe"))
	switch {
	case err != nil:
		return doctorCheck{levelWarning, "runs", "git could not tell whether " + rel + " is ignored: " + oneLine(err), ""}
	case ignored:
		return doctorCheck{levelOK, "runs", rel + " is ignored by git (run folders are not committed)", ""}
	}
	return doctorCheck{levelWarning, "runs", rel + " shows in git status: run folders are not meant to be committed",
		"printf '*\\n' > " + filepath.Join(rel, ".gitignore")}
}

// doctorEpic checks one epic in the store; from says where it came from
// ("" for the configuration or --epic).
func doctorEpic(ctx context.Context, client *beads.Client, epic, from string, storeOK bool) doctorCheck {
	where, fix := "", "correct workflow.epic / --epic"
	if from != "" {
		where, fix = ", "+from, "runtasks install AGENT --epic EPIC rewrites the hooks"
	}
	if !storeOK {
		return doctorCheck{levelWarning, "epic", epic + ": not checked (bd or the store is missing)" + where, "fix the lines above"}
	}
	is, err := client.Show(ctx, epic)
	switch {
	case beads.IsKind(err, beads.KindNotFound):
		return doctorCheck{levelError, "epic", epic + " does not exist in the store" + where, "bd list --type epic shows the epics; " + fix}
	case err != nil:
		return doctorCheck{levelError, "epic", epic + ": store not readable: " + oneLine(err) + where, "run bd show " + epic + " to see bd's error"}
	case is.Status == "closed":
		return doctorCheck{levelWarning, "epic", fmt.Sprintf("%s %q is closed: every stop will be allowed%s", epic, is.Title, where), "choose an open epic"}
	}
	return doctorCheck{levelOK, "epic", fmt.Sprintf("%s %q (%s)%s", epic, is.Title, is.Status, where), ""}
}

// doctorHookEpics are the epics the installed stop hooks pass (--epic), with
// the agents whose hooks pass each.
func doctorHookEpics(settings map[string]doctorSettings) map[string][]string {
	out := map[string][]string{}
	for _, agent := range hook.Agents {
		for _, e := range settings[agent].entries {
			if e.Epic != "" && !slices.Contains(out[e.Epic], agent) {
				out[e.Epic] = append(out[e.Epic], agent)
			}
		}
	}
	return out
}

// doctorSettings is runtasks' entries in one agent's project and user
// settings: found names each file with its count; bad is the first file
// that could not be read (then there are no entries).
type doctorSettings struct {
	found   []string
	entries []install.Entry
	bad     *doctorCheck
}

// doctorEntries reads runtasks' entries in agent's project and user
// settings.
func doctorEntries(o *doctorOptions, agent string) doctorSettings {
	var s doctorSettings
	for _, global := range []bool{false, true} {
		path, err := install.SettingsPath(install.Options{Agent: agent, Global: global, ProjectDir: o.Root, Home: o.Home, CodexHome: o.CodexHome})
		if err != nil {
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return doctorSettings{bad: &doctorCheck{levelError, agent, oneLine(err), "make " + path + " readable"}}
		}
		es, err := install.Entries(agent, data)
		if err != nil {
			return doctorSettings{bad: &doctorCheck{levelError, agent, path + " is not valid JSON: " + oneLine(err), "correct the file (" + agent + " ignores it too)"}}
		}
		if len(es) > 0 {
			s.found = append(s.found, fmt.Sprintf("%s (%d)", path, len(es)))
			s.entries = append(s.entries, es...)
		}
	}
	return s
}

// doctorAgent checks runtasks' entries in agent's project and user
// settings (s, read by doctorEntries); n counts them. Each entry's program
// must be runtasks (hookProgram): one that is missing or is something else
// leaves the agent without runtasks' hooks, an error; another runtasks
// (another path, perhaps another version) is a warning.
func doctorAgent(o *doctorOptions, agent string, s doctorSettings) (doctorCheck, int) {
	if s.bad != nil {
		return *s.bad, 0
	}
	found, entries := s.found, s.entries
	var bad, foreign []string
	seen := map[string]bool{}
	n := len(entries)
	for _, e := range entries {
		if seen[e.Program] {
			continue
		}
		seen[e.Program] = true
		same, problem, version := hookProgram(o, e.Program)
		switch {
		case problem != "":
			bad = append(bad, e.Program+" "+problem)
		case !same:
			foreign = append(foreign, fmt.Sprintf("%s (runtasks %s)", e.Program, version))
		}
	}
	fix := "runtasks install " + agent
	switch {
	case n == 0:
		return doctorCheck{levelOK, agent, "not installed", ""}, 0
	case len(bad) > 0:
		return doctorCheck{levelError, agent, fmt.Sprintf("%s: the hooks cannot run runtasks: %s", strings.Join(found, ", "), strings.Join(bad, "; ")),
			fix + " (--global for the user's settings) writes this binary, " + o.Executable + ", into the entries"}, n
	case len(foreign) > 0:
		return doctorCheck{levelWarning, agent, fmt.Sprintf("%s run %s, not this binary (%s, runtasks %s)", strings.Join(found, ", "), strings.Join(foreign, ", "), o.Executable, ownVersion()), fix + " (replaces the entries)"}, n
	default:
		return doctorCheck{levelOK, agent, "installed: " + strings.Join(found, ", ") + ", running this binary", ""}, n
	}
}

// runtasksMain is runtasks' main package, as a Go binary's build
// information names it.
const runtasksMain = "github.com/runtasks/runtasks/cmd/runtasks"

// hookProgram checks program, the first word of a hook's command (looked
// up on PATH when it has no slash). same: it is this binary. problem says
// why it is not a runtasks that can answer the hook ("" when it is one):
// it is missing, is not an executable file, or is not runtasks. A file is
// runtasks when its Go build information (debug/buildinfo, read from the
// file without running it: cheap, and nothing unknown is executed) names
// runtasksMain as its main package; a script, /bin/true or any other Go
// program does not. version is a runtasks' module version, as its build
// information records it ("(devel)" for a build from a checkout).
func hookProgram(o *doctorOptions, program string) (same bool, problem, version string) {
	path := program
	if !strings.ContainsRune(path, filepath.Separator) {
		if path = o.LookPath(program); path == "" {
			return false, "is not found on PATH", ""
		}
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	if path == o.Executable {
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

// ownVersion is this runtasks' module version ("(devel)" for a build from
// a checkout; "unknown" without build information).
func ownVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return "unknown"
}

// doctorBlockCap compares Claude Code's consecutive-block cap with
// max_cycles. The cap comes from the environment, or from the "env" of
// Claude Code's settings files.
func doctorBlockCap(o *doctorOptions, cfg *config.Config, claude bool) doctorCheck {
	maxCycles := cfg.Workflow.StopHook.MaxCycles
	val, src := o.Getenv(envBlockCap), "environment"
	if val == "" {
		for _, global := range []bool{false, true} {
			path, _ := install.SettingsPath(install.Options{Agent: hook.Claude, Global: global, ProjectDir: o.Root, Home: o.Home})
			if v := settingsEnv(path, envBlockCap); v != "" {
				val, src = v, path
				break
			}
		}
	}
	fix := fmt.Sprintf("export %s=%d (or 0 for none; runtasks' max_cycles then caps), or set it in the env of .claude/settings.json", envBlockCap, max(maxCycles, 1))
	if val == "" {
		if !claude {
			return doctorCheck{levelOK, "block-cap", envBlockCap + " unset (Claude Code not installed)", ""}
		}
		return doctorCheck{levelWarning, "block-cap", fmt.Sprintf("%s unset: Claude Code (2.1.143+) ends a turn after 8 blocks in a row without a tool call, below max_cycles %d", envBlockCap, maxCycles), fix}
	}
	n, err := strconv.Atoi(strings.TrimSpace(val))
	switch {
	case err != nil || n < 0:
		return doctorCheck{levelWarning, "block-cap", fmt.Sprintf("%s=%q (%s) is not a number", envBlockCap, val, src), fix}
	case n == 0 && maxCycles == 0:
		return doctorCheck{levelWarning, "block-cap", fmt.Sprintf("%s=0 (%s) and max_cycles 0: nothing caps the loop", envBlockCap, src), "set workflow.stop_hook.max_cycles"}
	case n == 0:
		return doctorCheck{levelOK, "block-cap", fmt.Sprintf("%s=0 (%s): off; max_cycles %d caps the loop", envBlockCap, src, maxCycles), ""}
	case maxCycles > 0 && n < maxCycles:
		return doctorCheck{levelWarning, "block-cap", fmt.Sprintf("%s=%d (%s) is below max_cycles %d", envBlockCap, n, src, maxCycles), fix}
	default:
		return doctorCheck{levelOK, "block-cap", fmt.Sprintf("%s=%d (%s), max_cycles %d", envBlockCap, n, src, maxCycles), ""}
	}
}

// settingsEnv reads env.<key> from a Claude Code settings file.
func settingsEnv(path, key string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var s struct {
		Env map[string]any `json:"env"`
	}
	if json.Unmarshal(data, &s) != nil {
		return ""
	}
	if v, ok := s.Env[key]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

// findBeadsDir is the first .beads directory from dir upwards ("" = none).
func findBeadsDir(dir string) string {
	for {
		p := filepath.Join(dir, ".beads")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// defaultConfig is the configuration of the embedded defaults alone, for a
// project whose project.yaml does not load.
func defaultConfig(root string, environ []string) (*config.Config, error) {
	dir, err := os.MkdirTemp("", "runtasks-doctor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	empty := filepath.Join(dir, config.ProjectFile)
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		return nil, err
	}
	cfg, _, err := config.Load(config.LoadOptions{ConfigFile: empty, StartDir: dir, Environ: environ})
	if err != nil {
		return nil, err
	}
	cfg.Root, cfg.File = root, ""
	return cfg, nil
}
