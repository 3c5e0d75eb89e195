package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/usage"
)

func newConfigCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show or check runtasks' configuration",
		Long: `runtasks reads its configuration in layers, each overriding the one before:
built-in defaults, the project's project.yaml, RUNTASKS_* environment
variables, then command-line flags.

project.yaml is --config, else $RUNTASKS_CONFIG, else the one in the project
root: the first directory from the working directory upwards that holds
project.yaml, .beads or .git. See docs/configuration.md.`,
		Example: `  runtasks config show
  runtasks config validate`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newConfigShowCmd(f), newConfigValidateCmd(f))
	setExitStatus(cmd, `  0  shown, or the file is valid
  4  usage or configuration error (each problem on its own line: source,
     key, what is wrong)`)
	return cmd
}

type configShowOptions struct {
	*Factory
	JSON bool
	cfg  *config.Config
	src  *config.Sources
}

func newConfigShowCmd(f *Factory) *cobra.Command {
	o := &configShowOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration and where each value came from",
		Long: `show prints every configuration key with its effective value and the layer
that set it: default, the project.yaml path, "env NAME" or "flag --name".
The project root, the file read and the date of the price table runtasks
ships (usage.prices entries are checked before it) come first.

The flags stop-hook takes (--epic, --max-cycles, ...) are accepted, so that
you can see what a hook invocation with them would use.`,
		Example: `  runtasks config show
  RUNTASKS_EPIC=bd-x7y8 runtasks config show
  runtasks config show --epic bd-x7y8 --max-cycles 20
  runtasks config show --json | jq '.keys[] | select(.source != "default")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.cfg, o.src, err = f.LoadConfig(cmd, ""); err != nil {
				return configError(f.Err, err)
			}
			return runConfigShow(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: root, file, keys [{key, value, source}], promises, prices_date")
	cmd.Flags().String("epic", "", "as stop-hook --epic (workflow.epic)")
	cmd.Flags().Int("max-cycles", 0, "as stop-hook --max-cycles (workflow.stop_hook.max_cycles)")
	cmd.Flags().Bool("taskmaster", false, "as stop-hook --taskmaster (workflow.done_token.required)")
	cmd.Flags().String("bd", "", "as stop-hook --bd (beads.bin)")
	cmd.Flags().String("state-dir", "", "as stop-hook --state-dir (state.dir)")
	return cmd
}

type configKeyJSON struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

type configShowJSON struct {
	Root     string           `json:"root"`
	File     string           `json:"file"`
	Keys     []configKeyJSON  `json:"keys"`
	Promises []config.Promise `json:"promises"`
	// PricesDate is the date of the shipped price table (usage.Prices).
	PricesDate string `json:"prices_date"`
}

func runConfigShow(o *configShowOptions) error {
	var keys []configKeyJSON
	for _, key := range config.ConfigKeys() {
		v, _ := o.cfg.Value(key)
		keys = append(keys, configKeyJSON{Key: key, Value: configWritten(v), Source: (*o.src)[key]})
	}
	if o.JSON {
		return printJSON(o.Out, configShowJSON{Root: o.cfg.Root, File: o.cfg.File, Keys: keys, Promises: o.cfg.Promises(), PricesDate: usage.PricesDate})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# project root: %s\n# project file: %s\n", o.cfg.Root, cmp.Or(o.cfg.File, "none (no project.yaml in the project root)"))
	fmt.Fprintf(&b, "# price table: runtasks' own of %s, after usage.prices (docs/usage.md)\n", usage.PricesDate)
	lefts := make([]string, len(keys))
	width := 0
	for i, k := range keys {
		val, err := json.Marshal(k.Value)
		if err != nil {
			return fmt.Errorf("%s: %w", k.Key, err)
		}
		lefts[i] = k.Key + " = " + string(val)
		width = max(width, min(len(lefts[i]), 56))
	}
	for i, k := range keys {
		fmt.Fprintf(&b, "%-*s  # %s\n", width, lefts[i], k.Source)
	}
	b.WriteString("# completion promises, resolved:\n")
	for _, p := range o.cfg.Promises() {
		state := ""
		if !o.cfg.AllowsExitOn(p.Condition) {
			state = " (not in allow_exit_on: ignored)"
		}
		fmt.Fprintf(&b, "#   %q -> %s%s\n", p.Text, p.Condition, state)
	}
	_, err := io.WriteString(o.Out, b.String())
	return err
}

// configWritten is a value as project.yaml would write it: a duration in Go
// syntax, a promise as its text or {text, condition} (a check writes itself:
// config.CheckSpec is a json.Marshaler).
func configWritten(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return config.FormatDuration(x)
	case []config.Promise:
		out := make([]any, len(x))
		for i, p := range x {
			out[i] = p.Text
			if p.Condition != "" {
				out[i] = map[string]string{"text": p.Text, "condition": p.Condition}
			}
		}
		return out
	}
	return v
}

type configValidateOptions struct {
	*Factory
	Path string
}

func newConfigValidateCmd(f *Factory) *cobra.Command {
	o := &configValidateOptions{Factory: f}
	return &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check a project.yaml and the RUNTASKS_* variables",
		Long: `validate checks a project.yaml (YAML syntax, unknown keys with the closest
known one, types, ranges, each workflow.checks item's options) and the
RUNTASKS_* (and TASKMASTER_*) variables of the environment: an empty
RUNTASKS_MAX_CYCLES= is an error every command would report. It prints
"FILE: ok", or every problem on its own line (file and line, or the
variable), and exits with status 4. Without FILE it checks the file other
commands read (--config, else $RUNTASKS_CONFIG, else the project root's).
Flags are not checked here; runtasks config show checks every layer.`,
		Example: `  runtasks config validate
  runtasks config validate project.yaml.example
  runtasks config validate --config ci/project.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wd, err := f.Getwd()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				o.Path = args[0]
				if !filepath.IsAbs(o.Path) {
					o.Path = filepath.Join(wd, o.Path)
				}
			} else {
				root, file, err := f.findProject(cmd, wd)
				if err != nil {
					return exitCode(engine.ExitUsage, err)
				}
				if file == "" {
					return exitCode(engine.ExitUsage, fmt.Errorf("no %s in the project root %s (name a file: runtasks config validate FILE)", config.ProjectFile, root))
				}
				o.Path = file
			}
			return runConfigValidate(o)
		},
	}
}

// runConfigValidate checks the file at Path and the environment's
// RUNTASKS_* (and TASKMASTER_*) values.
func runConfigValidate(o *configValidateOptions) error {
	data, err := agentfile.Read(o.Path, agentfile.MaxText)
	if err != nil {
		return exitCode(engine.ExitUsage, err)
	}
	var problems config.ErrorList
	for _, err := range []error{config.ValidateYAML(o.Path, data), config.ValidateEnv(o.Environ())} {
		if list, ok := err.(config.ErrorList); ok {
			problems = append(problems, list...)
		}
	}
	if len(problems) > 0 {
		return configError(o.Err, problems)
	}
	_, err = fmt.Fprintf(o.Out, "%s: ok\n", o.Path)
	return err
}

// configError prints configuration problems one a line and ends the
// command with status 4; other errors go to Main as they are.
func configError(w io.Writer, err error) error {
	var list config.ErrorList
	if !errors.As(err, &list) {
		return exitCode(engine.ExitUsage, err)
	}
	fmt.Fprintln(w, list) // one problem a line
	return exitCode(engine.ExitUsage, errSilent)
}
