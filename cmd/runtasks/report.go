package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/beads"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/headless"
	"github.com/runtasks/runtasks/internal/report"
	"github.com/runtasks/runtasks/internal/state"
)

type reportOptions struct {
	*Factory
	Epic, Path string // --epic, --out
	cfg        *config.Config
}

func newReportCmd(f *Factory) *cobra.Command {
	o := &reportOptions{Factory: f}
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
		Args:    cobra.NoArgs,
		PreRunE: loadConfig(f.LoadTrustedConfig, &o.cfg, engine.ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Path != "-" && !filepath.IsAbs(o.Path) {
				wd, err := f.Getwd()
				if err != nil {
					return exitCode(engine.ExitFailed, err)
				}
				o.Path = filepath.Join(wd, o.Path)
			}
			o.Epic = cmp.Or(o.Epic, o.cfg.Workflow.Epic)
			return runReport(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Epic, "epic", "", "the epic to report on (default: the configured epic, else the newest in the log)")
	cmd.Flags().StringVarP(&o.Path, "out", "o", "report.html", `the HTML file to write ("-": standard output)`)
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
	store := &state.Store{Dir: o.cfg.StateDir(), Warn: o.warn}
	recs, err := store.Records(state.RecordFilter{})
	if err != nil {
		return exitCode(engine.ExitFailed, err)
	}
	for i := len(recs) - 1; i >= 0 && o.Epic == ""; i-- {
		if recs[i].Epic != "" && recs[i].Outcome.Class() != state.ClassIgnored {
			o.Epic = recs[i].Epic
		}
	}
	if o.Epic == "" {
		return exitCode(engine.ExitNeedsPerson, fmt.Errorf("nothing to report: no decision on an epic in %s", store.LogPath()))
	}
	runs, skipped, err := headless.ListRuns(headless.RunsDir(o.cfg))
	if err != nil {
		return exitCode(engine.ExitFailed, fmt.Errorf("run records: %w", err))
	}
	for _, e := range skipped {
		o.warn(fmt.Sprint("skipped ", e))
	}
	top, tasks, err := newBeadsClient(o.Factory, o.cfg).Descendants(ctx, o.Epic)
	if err != nil {
		return cmp.Or(unknownEpic(o.Epic, err), exitCode(engine.ExitFailed, err))
	}
	rep := report.Build(report.Input{Epic: o.Epic, Title: top.Title, Tasks: tasks, Records: recs, Runs: runs, Now: o.Now(), Loc: localZone()})
	if len(rep.Cycles) == 0 {
		return exitCode(engine.ExitNeedsPerson, fmt.Errorf("nothing to report: no decision yet on epic %s in %s", o.Epic, store.LogPath()))
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
