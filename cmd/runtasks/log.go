package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/charmbracelet/log"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/runtasks/runtasks/orchestrator"
)

// newLogger logs to cfg.Log.File when set (appending), else to stderr. The
// returned close function releases the file. A hook's stdout is never used.
func newLogger(cfg *orchestrator.Config, stderr io.Writer, flagLevel string) (*log.Logger, func()) {
	w, closeFn := stderr, func() {}
	if cfg != nil && cfg.Log.File != "" {
		path := cfg.Log.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(cfg.Root, path)
		}
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			w, closeFn = f, func() { f.Close() }
		}
	}
	// The logger gets w behind a plain writer: given a terminal itself, its
	// colour detection would query the terminal (OSC 10/11, ESC[6n) and
	// wait for answers. Colours are set here instead: only on a terminal,
	// never with NO_COLOR.
	l := log.NewWithOptions(struct{ io.Writer }{w}, log.Options{Prefix: "runtasks", ReportTimestamp: w != stderr})
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == "" {
		l.SetColorProfile(termenv.ANSI256)
	} else {
		l.SetColorProfile(termenv.Ascii)
	}
	level := "warn"
	if cfg != nil && cfg.Log.Level != "" {
		level = cfg.Log.Level
	}
	if flagLevel != "" {
		level = flagLevel
	}
	if lv, err := log.ParseLevel(level); err == nil {
		l.SetLevel(lv)
	}
	return l, closeFn
}

// lazyLogger is a hook's logger, built (and its file opened) only when a
// line passes its level: most stops log nothing at the default level
// (warn), and building the styled logger is work the decision never reads.
type lazyLogger struct {
	cfg       *orchestrator.Config
	stderr    io.Writer
	flagLevel string
	logger    *log.Logger
	closeFn   func()
}

func newLazyLogger(cfg *orchestrator.Config, stderr io.Writer, flagLevel string) *lazyLogger {
	return &lazyLogger{cfg: cfg, stderr: stderr, flagLevel: flagLevel}
}

// level is the level newLogger sets.
func (l *lazyLogger) level() log.Level {
	level := "warn"
	if l.cfg != nil && l.cfg.Log.Level != "" {
		level = l.cfg.Log.Level
	}
	if l.flagLevel != "" {
		level = l.flagLevel
	}
	lv, err := log.ParseLevel(level)
	if err != nil {
		return log.InfoLevel // newLogger leaves the logger's default
	}
	return lv
}

// Log writes one line at lvl, building the logger first if needed.
func (l *lazyLogger) Log(lvl log.Level, msg any, keyvals ...any) {
	if lvl < l.level() {
		return
	}
	if l.logger == nil {
		l.logger, l.closeFn = newLogger(l.cfg, l.stderr, l.flagLevel)
	}
	l.logger.Log(lvl, msg, keyvals...)
}

func (l *lazyLogger) Info(msg any, keyvals ...any)  { l.Log(log.InfoLevel, msg, keyvals...) }
func (l *lazyLogger) Warn(msg any, keyvals ...any)  { l.Log(log.WarnLevel, msg, keyvals...) }
func (l *lazyLogger) Error(msg any, keyvals ...any) { l.Log(log.ErrorLevel, msg, keyvals...) }

// Close releases the log file, if one was opened.
func (l *lazyLogger) Close() {
	if l.closeFn != nil {
		l.closeFn()
	}
}
