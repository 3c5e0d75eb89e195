package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/transcript"
)

type codexMonitorOptions struct {
	*Factory
	Log      string
	Follow   bool
	Session  string // overrides the log's
	Prefix   string
	Promises []config.Promise
	// Interval is the pause between polls; Wait bounds --follow's wait for
	// a log that does not exist yet.
	Interval, Wait time.Duration
	// Sleep waits between polls; it returns ctx's error when ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
}

func newCodexCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "codex", Short: "Codex helpers that work without hooks", Args: cobra.NoArgs}
	cmd.AddCommand(newCodexMonitorCmd(f))
	return cmd
}

func newCodexMonitorCmd(f *Factory) *cobra.Command {
	opts := &codexMonitorOptions{Factory: f, Sleep: sleepCtx}
	cmd := &cobra.Command{
		Use:   "monitor --log FILE [--follow]",
		Short: "Report whether a Codex session printed its done token or a promise",
		Long: `monitor reads a Codex rollout file, or the older TUI session log, and
reports whether the done token (TASKMASTER_DONE::<session_id>; its prefix is
TASKMASTER_DONE_PREFIX, else workflow.done_token.prefix) or a configured
<promise> appeared in the final message of a task_complete (or
turn_complete, which Codex accepts as its alias). The session id comes from
the log, or --session.

The rollout file is <codex_home>/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl.
Codex 0.117 and later no longer write codex_event records to the TUI log
(CODEX_TUI_RECORD_SESSION=1): on it monitor sees no task_complete (exit 3).
With Codex 0.124 and later the native Stop hook (runtasks install codex)
replaces this monitor; it stays for runs without hooks.

--follow re-reads the growing file every TASKMASTER_POLL_INTERVAL seconds
(default 1) until the token appears, the TUI log records session_end, or an
interrupt; a log that does not exist yet is waited for up to --wait, then
the status is 3. The log must be a regular file (else exit 4).`,
		Example: `  # the newest rollout file of a session
  runtasks codex monitor --log ~/.codex/sessions/2026/11/21/rollout-2026-11-21T21-47-35-01a20014-….jsonl

  # wait for the token while codex runs (and for the file, up to 5 minutes)
  TASKMASTER_POLL_INTERVAL=2 runtasks codex monitor --follow --wait 5m --log "$ROLLOUT"

  # an old TUI log (Codex before 0.117)
  runtasks codex monitor --log ~/.codex/log/session-20260319T140318Z.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Log == "" {
				return exitCode(engine.ExitUsage, errors.New("codex monitor: --log FILE is required"))
			}
			cfg, _, err := f.LoadTrustedConfig(cmd, "")
			if err != nil {
				return exitCode(engine.ExitUsage, fmt.Errorf("codex monitor: configuration: %w", err))
			}
			opts.Prefix, opts.Promises = cfg.Workflow.DoneToken.Prefix, cfg.Promises()
			if opts.Interval, err = parsePollInterval(f.Getenv("TASKMASTER_POLL_INTERVAL")); err != nil {
				return exitCode(engine.ExitUsage, err)
			}
			return runCodexMonitor(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Log, "log", "", "Codex rollout file or TUI session log to read")
	cmd.Flags().BoolVar(&opts.Follow, "follow", false, "keep reading the growing file until the token appears")
	cmd.Flags().StringVar(&opts.Session, "session", "", "session id whose token counts (default: read from the log)")
	cmd.Flags().DurationVar(&opts.Wait, "wait", time.Minute, "with --follow, how long to wait for a log that does not exist yet")
	setExitStatus(cmd, `  0  the done token or a promise appeared in a task_complete
  2  task_complete events were seen, none holds the token or a promise
  3  no task_complete was seen (with --follow: also when the log did not
     appear within --wait)
  4  usage error or missing prerequisite (no such file without --follow,
     not a regular file, bad configuration, bad TASKMASTER_POLL_INTERVAL)`)
	return cmd
}

// parsePollInterval reads TASKMASTER_POLL_INTERVAL: seconds ("2", "0.5")
// or a Go duration ("500ms"); unset, one second.
func parsePollInterval(v string) (time.Duration, error) {
	if v == "" {
		return time.Second, nil
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("codex monitor: TASKMASTER_POLL_INTERVAL=%q: want positive seconds (2, 0.5) or a duration (500ms)", v)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// runCodexMonitor's error carries the exit status (errSilent when the
// report said it all).
func runCodexMonitor(ctx context.Context, o *codexMonitorOptions) error {
	f, err := openCodexLog(ctx, o)
	if err != nil {
		return err
	}
	defer f.Close()

	var (
		sc     transcript.CodexLogScanner
		offset int64
		seen   int // task_completes already judged
	)
	buf := make([]byte, 64<<10)
	for {
		// A file that shrank was truncated (Codex truncates the TUI log
		// when it opens it): start over.
		if fi, err := f.Stat(); err == nil && fi.Size() < offset {
			sc, offset, seen = transcript.CodexLogScanner{}, 0, 0
		}
		n, err := io.CopyBuffer(&sc, io.NewSectionReader(f, offset, math.MaxInt64-offset), buf)
		if offset += n; err != nil {
			return exitCode(engine.ExitUsage, fmt.Errorf("codex monitor: read %s: %w", o.Log, err))
		}
		if !o.Follow {
			sc.Flush()
		}
		log := &sc.Log
		session := cmp.Or(o.Session, log.SessionID)
		for ; seen < len(log.Completes); seen++ {
			t := log.Completes[seen]
			if engine.HasDoneToken(t.LastAgentMessage, o.Prefix, session) {
				fmt.Fprintf(o.Out, "found: %s::%s in the task_complete of turn %s\n", strings.TrimSuffix(o.Prefix, "::"), session, cmp.Or(t.TurnID, "(no id)"))
				return nil
			}
			if ps := engine.FindPromises(t.LastAgentMessage, o.Promises); len(ps) > 0 {
				fmt.Fprintf(o.Out, "found: <promise>%s</promise> in the task_complete of turn %s\n", ps[0].Text, cmp.Or(t.TurnID, "(no id)"))
				return nil
			}
		}
		if !o.Follow || log.Ended {
			return monitorReport(o, log, session)
		}
		if err := o.Sleep(ctx, o.Interval); err != nil {
			sc.Flush()
			return monitorReport(o, log, session)
		}
	}
}

// openCodexLog opens the log (a regular file only), with --follow polling
// up to Wait for one that does not exist yet (never: status 3).
func openCodexLog(ctx context.Context, o *codexMonitorOptions) (*os.File, error) {
	deadline := o.Now().Add(o.Wait)
	for {
		f, _, err := agentfile.Open(o.Log)
		switch {
		case err == nil:
			return f, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, exitCode(engine.ExitUsage, fmt.Errorf("codex monitor: %w", err))
		case !o.Follow:
			return nil, exitCode(engine.ExitUsage, fmt.Errorf("codex monitor: %s does not exist", o.Log))
		}
		if left := deadline.Sub(o.Now()); left <= 0 || o.Sleep(ctx, min(o.Interval, left)) != nil {
			when := "within " + o.Wait.String()
			if left > 0 {
				when = "before the monitor was interrupted"
			}
			fmt.Fprintf(o.Out, "no task_complete seen: %s did not appear %s\n", o.Log, when)
			return nil, exitCode(engine.ExitNeedsPerson, errSilent)
		}
	}
}

// monitorReport prints why nothing was found and returns status 2 or 3.
func monitorReport(o *codexMonitorOptions, l *transcript.CodexLog, session string) error {
	if len(l.Completes) == 0 {
		fmt.Fprintf(o.Out, "no task_complete seen in %s (%d lines)\n", o.Log, l.Lines)
		if l.Format == transcript.FormatTUILog && l.Events == 0 {
			fmt.Fprintln(o.Err, "runtasks: this TUI session log holds no codex_event records: Codex 0.117 and later no longer write them; read the session's rollout file (<codex_home>/sessions/…/rollout-*.jsonl) or use the native Stop hook (runtasks install codex)")
		}
		return exitCode(engine.ExitNeedsPerson, errSilent)
	}
	what := "a promise"
	if session != "" {
		what = fmt.Sprintf("%s::%s or a promise", strings.TrimSuffix(o.Prefix, "::"), session)
	} else {
		fmt.Fprintln(o.Err, "runtasks: no session id in the log and no --session: only promises can match")
	}
	fmt.Fprintf(o.Out, "missing: %d task_complete event(s), none holds %s\n", len(l.Completes), what)
	return exitCode(engine.ExitWorkLeft, errSilent)
}
