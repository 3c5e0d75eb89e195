// Package doctor checks that runtasks, bd, the project and the agents fit
// together. Each check is a Finding: ok, a warning or an error, and for a
// problem its fix.
package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/claim"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/git"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/trust"
	"github.com/runtasks/runtasks/internal/usage"
)

// Levels of a finding.
const (
	OK      = "ok"
	Warning = "warning"
	Error   = "error"
)

// TestedBD is the bd version runtasks is tested with.
const TestedBD = "1.3.0"

// Finding is one check's result.
type Finding struct {
	Level, Name, Msg, Fix string
}

// String is the finding's line: level, name, message and, for a problem,
// the fix.
func (f Finding) String() string {
	line := fmt.Sprintf("%-7s %-9s %s", f.Level, f.Name, f.Msg)
	if f.Fix != "" && f.Level != OK {
		line += " — fix: " + f.Fix
	}
	return line
}

// Beads is what doctor asks bd.
type Beads interface {
	Version(ctx context.Context) (string, error)
	Server(ctx context.Context) (beads.ServerStatus, error)
	Show(ctx context.Context, id string) (beads.Issue, error)
}

// Inputs are what the checks take from outside.
type Inputs struct {
	// Cfg is nil when the configuration did not load (CfgErr says why): the
	// checks then run on the defaults, with Environ's variables.
	Cfg     *config.Config
	CfgErr  error
	Src     *config.Sources
	Environ []string
	// Root is the project root (found even when the configuration is bad);
	// Wd the directory doctor runs in.
	Root, Wd string
	// Home and CodexHome ("" = Home/.codex) hold the agents' user settings.
	Home, CodexHome string
	// Executable is this runtasks binary: what install writes into hooks.
	Executable string
	// LookPath finds a program on PATH ("" = not found).
	LookPath func(string) string
	Beads    func(*config.Config) Beads
	// ReadFile reads the agents' settings files and project.yaml.
	ReadFile func(string) ([]byte, error)
	// TrustState is the trust of the project's project.yaml; nil when the
	// user's trust store cannot be found (TrustErr says why).
	TrustState func(root, file string) (trust.State, error)
	TrustErr   error
}

// Run makes every check, one after the other, and reports each as it is
// made. bd is asked at most three times. It returns whether a check is an
// error.
func Run(ctx context.Context, in *Inputs, report func(Finding)) (failed bool) {
	emit := func(fs ...Finding) {
		for _, f := range fs {
			report(f)
			failed = failed || f.Level == Error
		}
	}
	cfg := in.Cfg
	if cfg == nil {
		emit(configError(in.CfgErr))
		var err error
		if cfg, err = config.LoadEnv(in.Root, in.Environ); err != nil {
			return true
		}
	}
	client := in.Beads(cfg)
	f, bdOK := checkBD(ctx, in, cfg, client)
	emit(f)
	f, store := checkStore(cfg, in.Environ)
	emit(f)
	ready := bdOK && store != ""
	emit(checkServer(ctx, client, ready))

	settings := make(map[string]agentSettings, len(hook.Agents))
	for _, agent := range hook.Agents {
		settings[agent] = readSettings(in, agent)
	}
	emit(checkEpics(ctx, client, cfg.Workflow.Epic, settings, ready)...)
	if in.Cfg != nil {
		emit(checkConfig(in))
	}
	emit(checkTrust(in))
	for _, agent := range hook.Agents {
		emit(checkAgent(in, agent, settings[agent]))
		emit(checkDoubleStop(agent, settings[agent])...)
		emit(checkFires(in, agent, settings[agent])...)
	}
	emit(checkBlockCap(in, cfg, settings[hook.Claude]))
	emit(checkTimeouts(cfg, settings))
	emit(checkState(cfg.StateDir()))
	emit(checkPrices(cfg)...)
	emit(checkRuns(ctx, cfg))
	return failed
}

func checkBD(ctx context.Context, in *Inputs, cfg *config.Config, client Beads) (Finding, bool) {
	bin := cmp.Or(cfg.Beads.Bin, "bd")
	path := bin
	if !strings.ContainsRune(bin, filepath.Separator) {
		path = in.LookPath(bin)
	}
	if path == "" {
		return Finding{Error, "bd", bin + " not found on PATH", "install bd " + TestedBD + " (make bd builds it into .tools/bin) or set beads.bin / RUNTASKS_BD"}, false
	}
	v, err := client.Version(ctx)
	switch {
	case err != nil:
		return Finding{Error, "bd", path + ": " + oneLine(err), "check that " + path + " is bd (bd version --json)"}, false
	case v != TestedBD:
		return Finding{Warning, "bd", fmt.Sprintf("bd %s at %s; runtasks is tested with %s", v, path, TestedBD), "use bd " + TestedBD + " if bd's JSON differs"}, true
	}
	return Finding{OK, "bd", fmt.Sprintf("bd %s at %s", v, path), ""}, true
}

// checkStore finds the beads store ("" = none), as bd would
// (beads.FindStore).
func checkStore(cfg *config.Config, environ []string) (Finding, string) {
	store, where, ok := beads.FindStore(cfg.BeadsDir(), cfg.Root, environ)
	if !ok {
		return Finding{Error, "store", "no beads store: runtasks " + where, "bd init in the project, or set beads.dir / BEADS_DIR"}, ""
	}
	if _, err := os.ReadDir(store); err != nil {
		return Finding{Error, "store", oneLine(err), "make " + store + " readable"}, store
	}
	return Finding{OK, "store", store, ""}, store
}

// checkServer says where the store lives (embedded, or on a Dolt SQL
// server) and, in server mode, whether the server answers.
func checkServer(ctx context.Context, client Beads, ready bool) Finding {
	if !ready {
		return Finding{Warning, "server", "not checked (bd or the store is missing)", "fix the lines above"}
	}
	st, err := client.Server(ctx)
	switch {
	case err != nil:
		return Finding{Error, "server", "bd dolt show: " + oneLine(err), "run bd dolt show to see bd's error"}
	case st.Mode == beads.ModeEmbedded:
		return Finding{OK, "server", "embedded store (Dolt inside each bd process; one machine)", ""}
	}
	where := fmt.Sprintf("Dolt SQL server %s:%d, database %s, user %s", st.Host, st.Port, st.Database, st.User)
	if st.TLS {
		where += ", TLS"
	}
	if !st.Answers {
		return Finding{Error, "server", "server mode: " + where + ": does not answer",
			"start the server (docs/scale.md), or correct BEADS_DOLT_SERVER_HOST / BEADS_DOLT_SERVER_PORT / BEADS_DOLT_PASSWORD; bd dolt test checks it"}
	}
	return Finding{OK, "server", "server mode: " + where + ": answers", ""}
}

// checkEpics checks the configured epic, else each epic the installed stop
// hooks pass (--epic), naming the agents whose hooks pass it.
func checkEpics(ctx context.Context, client Beads, epic string, settings map[string]agentSettings, ready bool) []Finding {
	if epic != "" {
		return []Finding{checkEpic(ctx, client, epic, "", ready)}
	}
	hooked := map[string][]string{}
	for _, agent := range hook.Agents {
		for _, e := range settings[agent].entries {
			if e.Epic != "" && settings[agent].bad == nil && !slices.Contains(hooked[e.Epic], agent) {
				hooked[e.Epic] = append(hooked[e.Epic], agent)
			}
		}
	}
	if len(hooked) == 0 {
		return []Finding{{OK, "epic", "none configured: the hooks drive only sessions given one (--epic, RUNTASKS_EPIC, an armed session)", ""}}
	}
	var out []Finding
	for _, e := range slices.Sorted(maps.Keys(hooked)) {
		out = append(out, checkEpic(ctx, client, e, "passed by the "+strings.Join(hooked[e], ", ")+" hooks' --epic", ready))
	}
	return out
}

// checkEpic checks one epic in the store; from says where it came from
// ("" for the configuration or --epic).
func checkEpic(ctx context.Context, client Beads, epic, from string, ready bool) Finding {
	where, fix := "", "correct workflow.epic / --epic"
	if from != "" {
		where, fix = ", "+from, "runtasks install AGENT --epic EPIC rewrites the hooks"
	}
	if !ready {
		return Finding{Warning, "epic", epic + ": not checked (bd or the store is missing)" + where, "fix the lines above"}
	}
	is, err := client.Show(ctx, epic)
	switch {
	case beads.IsKind(err, beads.KindNotFound):
		return Finding{Error, "epic", epic + " does not exist in the store" + where, "bd list --type epic shows the epics; " + fix}
	case err != nil:
		return Finding{Error, "epic", epic + ": store not readable: " + oneLine(err) + where, "run bd show " + epic + " to see bd's error"}
	case is.Status == "closed":
		return Finding{Warning, "epic", fmt.Sprintf("%s %q is closed: every stop will be allowed%s", epic, is.Title, where), "choose an open epic"}
	}
	return Finding{OK, "epic", fmt.Sprintf("%s %q (%s)%s", epic, is.Title, is.Status, where), ""}
}

// checkTrust says whether the hooks read the project's project.yaml.
func checkTrust(in *Inputs) Finding {
	if f := config.LookupEnv(in.Environ, config.EnvConfig); f != "" {
		return Finding{OK, "trust", config.EnvConfig + " names " + f + ": the hooks read it as named", ""}
	}
	file := filepath.Join(in.Root, config.ProjectFile)
	if _, err := os.Stat(file); err != nil {
		return Finding{OK, "trust", "no project.yaml in " + in.Root + ": nothing to trust", ""}
	}
	if in.TrustState == nil {
		return Finding{Warning, "trust", "no trust store (" + oneLine(in.TrustErr) + "): the hooks ignore " + file, "set HOME or XDG_CONFIG_HOME"}
	}
	fix := "review " + file + ", then run `runtasks trust " + config.ShellQuote(in.Root) + "`"
	st, err := in.TrustState(in.Root, file)
	switch {
	case err != nil:
		return Finding{Warning, "trust", oneLine(err) + ": runtasks ignores " + file + " where it needs trust" + wouldRun(in, file), fix}
	case st == trust.Trusted:
		return Finding{OK, "trust", in.Root + " is trusted: runtasks reads " + file, ""}
	}
	return Finding{Warning, "trust", file + " is " + st.String() + ": the hooks and doctor ignore it (defaults, environment and flags only)" + wouldRun(in, file), fix}
}

// wouldRun says what an untrusted project.yaml would make runtasks run
// (config.Review), for doctor: doctor runs none of it.
func wouldRun(in *Inputs, file string) string {
	data, err := in.ReadFile(file)
	if err != nil {
		return ""
	}
	execs, err := config.Review(in.Root, data)
	if err != nil || len(execs) == 0 {
		return "; it runs nothing of its own"
	}
	var items []string
	for _, e := range execs {
		items = append(items, e.Key+": "+e.Value)
	}
	return "; trusted, it would make runtasks run or use: " + strings.Join(items, "; ")
}

// configError is the finding of a configuration that does not load,
// naming the variables and files at fault.
func configError(err error) Finding {
	var names, files []string
	var list config.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			if name, ok := strings.CutPrefix(e.Source, "env "); ok && !slices.Contains(names, name) {
				names = append(names, name)
			} else if !ok && e.Source != "" && !slices.Contains(files, e.Source) {
				files = append(files, e.Source)
			}
		}
	}
	msg, fixes := "configuration: "+oneLine(err), []string(nil)
	if len(names) > 0 {
		msg = "the environment makes the configuration invalid (" + strings.Join(names, ", ") + "): runtasks is off, its hooks allow every stop and say why: " + oneLine(err)
		fixes = append(fixes, "unset "+strings.Join(names, " ")+" (or give it a valid value) in the shell the agent starts from")
	}
	for _, f := range files {
		fixes = append(fixes, "correct "+f+" (runtasks config validate lists its problems)")
	}
	if len(fixes) == 0 {
		fixes = append(fixes, "correct the project.yaml or the variable it names (runtasks config show lists the keys)")
	}
	return Finding{Error, "config", msg, strings.Join(fixes, "; ")}
}

// checkConfig says which project.yaml applies, and whether the
// environment switched the stop hook off.
func checkConfig(in *Inputs) Finding {
	cfg := in.Cfg
	if !cfg.Workflow.StopHook.Enabled {
		src := in.Src.Of("workflow.stop_hook.enabled")
		if name, ok := strings.CutPrefix(src, "env "); ok {
			return Finding{Error, "config", "workflow.stop_hook.enabled is false (" + src + "): the stop hooks allow every stop", "unset " + name + " in the shell the agent starts from"}
		}
		return Finding{Warning, "config", "workflow.stop_hook.enabled is false (" + src + "): the stop hooks allow every stop", "set it to true to drive sessions"}
	}
	switch {
	case cfg.Untrusted != nil:
		data, err := in.ReadFile(cfg.Untrusted.Path)
		if err == nil {
			err = config.ValidateYAML(cfg.Untrusted.Path, data)
		}
		if err != nil {
			return Finding{Warning, "config", cfg.Untrusted.Path + " (not applied: " + cfg.Untrusted.State.String() + ") has problems: " + oneLine(err), "correct it before you trust it"}
		}
		return Finding{OK, "config", cfg.Untrusted.Path + " is valid (not applied: " + cfg.Untrusted.State.String() + ")", ""}
	case cfg.File == "":
		return Finding{Warning, "config", "no project.yaml: the defaults apply", "runtasks install AGENT writes one, or copy project.yaml.example"}
	}
	return Finding{OK, "config", cfg.File + " is valid", ""}
}

// checkState creates the state directory (and its .gitignore) and writes a
// file in it.
func checkState(dir string) Finding {
	fix := "make " + dir + " writable or set state.dir / RUNTASKS_STATE_DIR"
	if err := state.EnsureStateDir(dir); err != nil {
		return Finding{Error, "state", oneLine(err), fix}
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return Finding{Error, "state", dir + " is not writable: " + oneLine(err), fix}
	}
	f.Close()
	os.Remove(f.Name())
	return Finding{OK, "state", dir + " is writable", ""}
}

// checkPrices warns once about the models the loops used that have no price.
func checkPrices(cfg *config.Config) []Finding {
	states, _ := (&state.Store{Dir: cfg.StateDir()}).List()
	var models []string
	for _, st := range states {
		models = append(models, st.Spent.Models...)
	}
	if un := usage.Unpriced(cfg.Usage.Prices, models); len(un) > 0 {
		return []Finding{{Warning, "prices", "no price for " + strings.Join(un, ", ") + ": tokens counted, cost unknown, a cost budget cannot be enforced",
			"add it to usage.prices (docs/usage.md)"}}
	}
	return nil
}

// checkRuns says whether git tracks the runs folder, ignores it, or would
// show it in git status: run folders are not meant to be committed.
func checkRuns(ctx context.Context, cfg *config.Config) Finding {
	dir := cfg.Path(cmp.Or(cfg.Claim.RunsDir, "runs"))
	rel := claim.Rel(cfg.Root, dir)
	repo := git.Repo{Dir: cfg.Root}
	tracked, err := repo.Tracked(ctx, rel)
	if err != nil {
		if strings.Contains(err.Error(), "not a git repository") {
			return Finding{OK, "runs", rel + ": not in a git work tree", ""}
		}
		return Finding{Warning, "runs", "git could not tell whether " + rel + " is tracked: " + oneLine(err), ""}
	}
	if n := len(tracked); n > 0 {
		return Finding{Warning, "runs", fmt.Sprintf("%s: %d file(s) tracked by git; run folders are the agent's scratch record, not meant to be committed", rel, n),
			"git rm -r --cached " + rel + " (the files stay on disk), then commit"}
	}
	if _, err := os.Stat(dir); err != nil {
		return Finding{OK, "runs", rel + " not created yet (runtasks writes " + filepath.Join(rel, ".gitignore") + " when it creates it)", ""}
	}
	ignored, err := repo.Ignored(ctx, filepath.Join(rel, "run-doctor-probe"))
	switch {
	case err != nil:
		return Finding{Warning, "runs", "git could not tell whether " + rel + " is ignored: " + oneLine(err), ""}
	case ignored:
		return Finding{OK, "runs", rel + " is ignored by git (run folders are not committed)", ""}
	}
	return Finding{Warning, "runs", rel + " shows in git status: run folders are not meant to be committed",
		"printf '*\\n' > " + filepath.Join(rel, ".gitignore")}
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
