package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/report"
	"github.com/runtasks/runtasks/internal/state"
)

type reportOptions struct {
	Out, Err io.Writer
	Store    *state.Store
	RunsDir  string // "" = none read
	Epic     string // "": the newest decision's
	Path     string // "-": Out
	Now      func() time.Time
	Loc      *time.Location
	// Tree reads the epic and its subtree from beads (bd list --all).
	Tree func(ctx context.Context, epic string) (beads.Issue, []beads.Issue, error)
}

func newReportCmd(f *Factory) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write one self-contained HTML page of an epic's loop, to attach to a PR",
		Long: `report writes one HTML file of an epic's loop, to attach to a pull request:
a summary, each session's timeline (closed tasks, rejected promises,
escalations and stuck tasks marked), tokens and cost per decision and per
claimed task, the tasks closed, the time to complete and runtasks run's
runs. It reads the decision log, the run records and, in one bd query
(bd list --all), the epic's tasks: their titles and closed times. CSS and
SVG are inline, no script, nothing fetched; times are in the local zone,
named (set TZ for another). The epic is --epic, else workflow.epic, else
the newest decision's. The file is written whole or not at all.`,
		Example: `  runtasks report                                # report.html, the newest epic
  runtasks report --epic bd-x7y8 --out epic.html
  runtasks report --epic bd-x7y8 --out - | gzip > epic.html.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out, opts.Err, opts.Now, opts.Loc = f.Out, f.Err, f.Now, localZone()
			cfg, _, err := f.LoadTrustedConfig(cmd, "")
			if err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			opts.Epic = cmp.Or(opts.Epic, cfg.Workflow.Epic)
			opts.RunsDir = headless.RunsDir(cfg)
			opts.Store = &state.Store{Dir: cfg.StateDir(), Warn: f.warn}
			opts.Tree = newBeadsClient(f, cfg).Descendants
			if opts.Path != "-" && !filepath.IsAbs(opts.Path) {
				wd, err := f.Getwd()
				if err != nil {
					return exitCode(engine.ExitFailed, err)
				}
				opts.Path = filepath.Join(wd, opts.Path)
			}
			return runReport(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Epic, "epic", "", "the epic to report on (default: the configured epic, else the newest in the log)")
	cmd.Flags().StringVarP(&opts.Path, "out", "o", "report.html", `the HTML file to write ("-": standard output)`)
	cmd.Flags().String("state-dir", "", "state directory (env RUNTASKS_STATE_DIR, state.dir)")
	setExitStatus(cmd, `  0  written
  1  failed: the state directory or beads could not be read, or the file
     not written
  3  nothing to report: no decision on the epic in the log (no file written)
  4  usage or setup error: bad flags or configuration, an epic beads does
     not know`)
	return cmd
}

func runReport(ctx context.Context, o *reportOptions) error {
	recs, err := o.Store.Records(state.RecordFilter{})
	if err != nil {
		return exitCode(engine.ExitFailed, err)
	}
	if o.Epic == "" {
		for i := len(recs) - 1; i >= 0 && o.Epic == ""; i-- {
			if recs[i].Epic != "" && recs[i].Outcome.Class() != state.ClassIgnored {
				o.Epic = recs[i].Epic
			}
		}
		if o.Epic == "" {
			return exitCode(engine.ExitNeedsPerson, fmt.Errorf("nothing to report: no decision on an epic in %s", o.Store.LogPath()))
		}
	}
	var runs []headless.RunState
	if o.RunsDir != "" {
		var skipped []error
		runs, skipped, err = headless.ListRuns(o.RunsDir)
		if err != nil {
			return exitCode(engine.ExitFailed, fmt.Errorf("run records: %w", err))
		}
		for _, e := range skipped {
			fmt.Fprintln(o.Err, "runtasks: warning: skipped", e)
		}
	}
	epic, tasks, err := o.Tree(ctx, o.Epic)
	if err != nil {
		return cmp.Or(unknownEpic(o.Epic, err), exitCode(engine.ExitFailed, err))
	}
	rep := report.Build(report.Input{Epic: o.Epic, Title: epic.Title, Tasks: tasks, Records: recs, Runs: runs, Now: o.Now(), Loc: o.Loc})
	if len(rep.Cycles) == 0 {
		return exitCode(engine.ExitNeedsPerson, fmt.Errorf("nothing to report: no decision yet on epic %s in %s", o.Epic, o.Store.LogPath()))
	}
	var page bytes.Buffer
	if err := report.Render(&page, rep); err != nil {
		return exitCode(engine.ExitFailed, err)
	}
	if o.Path == "-" {
		_, err := o.Out.Write(page.Bytes())
		return err
	}
	if err := renameio.WriteFile(o.Path, page.Bytes(), 0o644, renameio.WithStaticPermissions(0o644)); err != nil {
		return exitCode(engine.ExitFailed, err)
	}
	fmt.Fprintf(o.Out, "wrote %s\n%s", o.Path, rep.Summary())
	return nil
}

// localZone is the zone runtasks runs in under its IANA name (TZ, else
// /etc/localtime's target; neither: UTC), so that a page can name it.
func localZone() *time.Location {
	name, ok := os.LookupEnv("TZ")
	if !ok {
		p, err := filepath.EvalSymlinks("/etc/localtime")
		_, name, ok = strings.Cut(p, "zoneinfo/")
		ok = ok || errors.Is(err, fs.ErrNotExist)
	}
	if loc, err := time.LoadLocation(strings.TrimPrefix(name, ":")); ok && err == nil {
		return loc
	}
	return time.Local
}

// unknownEpic is the error (exit 4) when beads answered that it has no
// such epic: a typo, told apart from an epic nothing was recorded for.
func unknownEpic(epic string, err error) error {
	if beads.IsKind(err, beads.KindNotFound) {
		return exitCode(engine.ExitUsage, fmt.Errorf("unknown epic %s: beads has no such issue", epic))
	}
	return nil
}
