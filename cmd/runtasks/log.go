package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/charmbracelet/log"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/runtasks/runtasks/internal/config"
)

// newLogger is the logger of every command, the hooks' and people's: to
// cfg.Log.File when set (appending, logfmt lines with the time), else to
// stderr (charm log's text). The returned close function releases the
// file.
func newLogger(cfg *config.Config, stderr io.Writer, flagLevel string) (*log.Logger, func()) {
	w, closeFn := stderr, func() {}
	if f := openLogFile(cfg); f != nil {
		w, closeFn = f, func() { f.Close() }
	}
	// The logger gets w behind a plain writer: given a terminal itself, its
	// colour detection would query the terminal (OSC 10/11, ESC[6n) and
	// wait for answers. Colours are set here instead: only on a terminal,
	// never with NO_COLOR.
	opts := log.Options{Prefix: logPrefix, ReportTimestamp: w != stderr, TimeFormat: logTimeFormat}
	if w != stderr {
		// A log file is logfmt, one line a record, for tools to read.
		opts.Formatter = log.LogfmtFormatter
	}
	l := log.NewWithOptions(struct{ io.Writer }{w}, opts)
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == "" {
		l.SetColorProfile(termenv.ANSI256)
	} else {
		l.SetColorProfile(termenv.Ascii)
	}
	if lv, err := log.ParseLevel(logLevelName(cfg, flagLevel)); err == nil {
		l.SetLevel(lv)
	}
	return l, closeFn
}

// The log's prefix and time format.
const (
	logPrefix     = "runtasks"
	logTimeFormat = "2006/01/02 15:04:05"
)

// logLevelName is the logger's level: --log-level, else log.level, else
// warn. A name charm log does not know leaves its default (info).
func logLevelName(cfg *config.Config, flagLevel string) string {
	switch {
	case flagLevel != "":
		return flagLevel
	case cfg != nil && cfg.Log.Level != "":
		return cfg.Log.Level
	}
	return "warn"
}

// openLogFile opens log.file (relative to the project root) for appending;
// nil when none is set or it does not open (the logger writes to stderr).
func openLogFile(cfg *config.Config) *os.File {
	if cfg == nil || cfg.Log.File == "" {
		return nil
	}
	path := cfg.Log.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(cfg.Root, path)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	return f
}
