package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/runtasks/runtasks/internal/config"
)

// TestLoggerLevelsAndFile: the log file gets timed logfmt lines (nothing
// on stderr), nothing below the level; stderr gets charm log's text; a bad
// level name logs from info on; log.level (which --log-level sets:
// TestConfigShow's "every layer") lets debug lines through.
func TestLoggerLevelsAndFile(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	l, closeLog := newLogger(&config.Config{Root: dir, Log: config.Log{File: "run.log"}}, &stderr)
	l.Info("below warn")
	l.Warn("kept", "k", "v", "why", `2 ready; "quoted"`)
	l.Error("stop allowed", "err", "bd: exit status 1")
	closeLog()
	data, _ := os.ReadFile(filepath.Join(dir, "run.log"))
	want := regexp.MustCompile(`^time="\d{4}/\d\d/\d\d \d\d:\d\d:\d\d" level=warn prefix=runtasks msg=kept k=v why="2 ready; \\"quoted\\""\n` +
		`time="\d{4}/\d\d/\d\d \d\d:\d\d:\d\d" level=error prefix=runtasks msg="stop allowed" err="bd: exit status 1"\n$`)
	if !want.Match(data) || stderr.Len() != 0 {
		t.Errorf("log file %q, stderr %q", data, stderr.String())
	}

	stderr.Reset()
	l, closeLog = newLogger(&config.Config{Log: config.Log{Level: "bogus"}}, &stderr)
	defer closeLog()
	l.Debug("hidden")
	l.Info("shown", "k", "v")
	if got := stderr.String(); got != "INFO runtasks: shown k=v\n" {
		t.Errorf("stderr %q", got)
	}

	stderr.Reset()
	l, _ = newLogger(&config.Config{Log: config.Log{Level: "debug"}}, &stderr)
	l.Debug("shown at debug")
	if got := stderr.String(); got != "DEBU runtasks: shown at debug\n" {
		t.Errorf("log.level debug: %q", got)
	}
}
