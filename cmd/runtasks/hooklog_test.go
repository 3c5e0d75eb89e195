package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
)

// TestHookLogSameAsCharm: the hook commands' lines are the lines charm
// log's logfmt formatter writes for a person's command into the same log
// file.
func TestHookLogSameAsCharm(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 41, 5, 0, time.UTC)
	cases := []struct {
		lvl     slog.Level
		msg     any
		keyvals []any
	}{
		{logWarn, "plain", nil},
		{logInfo, "decision", []any{"session", "s1", "epic", "bd-e", "outcome", state.OutcomeContinue, "block", true, "cycle", 3, "why", `2 ready; "quoted" and spaced`}},
		{logError, "stop allowed", []any{"err", errors.New("bd: exit status 1\nsecond line")}},
		{logDebug, "", []any{"empty", "", "nil", nil}},
		{logWarn, "odd", []any{"key"}},
		{logWarn, "map", []any{"m", map[string]int{"a": 1}, "d", 1500 * time.Millisecond}},
		{logError + 4, "fatal level", nil},
	}
	for _, timed := range []bool{false, true} {
		for _, c := range cases {
			var want bytes.Buffer
			l := log.NewWithOptions(&want, log.Options{Prefix: logPrefix, ReportTimestamp: timed, TimeFormat: logTimeFormat,
				TimeFunction: func(time.Time) time.Time { return at }, Formatter: log.LogfmtFormatter, Level: log.DebugLevel})
			l.Log(log.Level(c.lvl), c.msg, c.keyvals...)
			got := string(logfmtLine(timed, at, c.lvl, c.msg, c.keyvals...))
			if got != want.String() {
				t.Errorf("timed %v, %v %q %v:\nhook:  %q\ncharm: %q", timed, c.lvl, c.msg, c.keyvals, got, want.String())
			}
		}
	}
}

// TestHookLoggerLevelsAndFile: nothing is opened below the level; the log
// file gets timed lines, stderr untimed ones; a bad level name logs from
// info on.
func TestHookLoggerLevelsAndFile(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	l := newHookLogger(&config.Config{Root: dir, Log: config.Log{File: "run.log"}}, &stderr, "")
	l.Info("below warn")
	if _, err := os.Stat(filepath.Join(dir, "run.log")); !os.IsNotExist(err) {
		t.Fatalf("log file opened for a line below the level: %v", err)
	}
	l.Warn("kept", "k", "v")
	l.Close()
	data, _ := os.ReadFile(filepath.Join(dir, "run.log"))
	if !strings.HasPrefix(string(data), "time=") || !strings.Contains(string(data), "level=warn prefix=runtasks msg=kept k=v\n") || stderr.Len() != 0 {
		t.Errorf("log file %q, stderr %q", data, stderr.String())
	}
	stderr.Reset()
	l = newHookLogger(&config.Config{Log: config.Log{Level: "bogus"}}, &stderr, "")
	l.Debug("hidden")
	l.Info("shown")
	if got := stderr.String(); got != "level=info prefix=runtasks msg=shown\n" {
		t.Errorf("stderr %q", got)
	}
	stderr.Reset()
	newHookLogger(&config.Config{Log: config.Log{Level: "error"}}, &stderr, "debug").Debug("flag wins")
	if !strings.Contains(stderr.String(), "msg=\"flag wins\"") {
		t.Errorf("--log-level debug did not win over log.level: %q", stderr.String())
	}
}
