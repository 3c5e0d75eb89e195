//go:build !runtasks_hook

package main

import (
	"io"
	"os"

	"github.com/charmbracelet/log"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/runtasks/runtasks/internal/config"
)

// newLogger is a person's command's logger: to cfg.Log.File when set
// (appending, logfmt lines as the hooks write them), else to stderr (charm
// log's text). The returned close function releases the file. The hook
// commands log through hookLogger, which does not link the terminal
// packages.
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
		// A log file is logfmt, as the hooks write it (hookLogger).
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
