package main

import (
	"cmp"
	"io"
	"os"

	"github.com/charmbracelet/log"
	"github.com/muesli/termenv"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/headless"
)

// newLogger is every command's logger: logfmt lines with the time appended
// to log.file (relative to the project root) when set and it opens, else
// charm log's text on stderr. Its level is log.level (--log-level sets it),
// else warn (a name charm log does not know leaves info).
func newLogger(cfg *config.Config, stderr io.Writer) (*log.Logger, func()) {
	w, closeFn := stderr, func() {}
	if path := cfg.Path(cfg.Log.File); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			w, closeFn = f, func() { f.Close() }
		}
	}
	opts := log.Options{Prefix: "runtasks", ReportTimestamp: w != stderr, TimeFormat: "2006/01/02 15:04:05"}
	if w != stderr {
		opts.Formatter = log.LogfmtFormatter
	}
	// Behind a plain writer: given a terminal, charm log's colour detection
	// would query it (OSC 10/11, ESC[6n) and wait for answers. Colours only
	// on a terminal, never with NO_COLOR.
	l := log.NewWithOptions(struct{ io.Writer }{w}, opts)
	if headless.IsTerminal(w) && os.Getenv("NO_COLOR") == "" {
		l.SetColorProfile(termenv.ANSI256)
	} else {
		l.SetColorProfile(termenv.Ascii)
	}
	if lv, err := log.ParseLevel(cmp.Or(cfg.Log.Level, "warn")); err == nil {
		l.SetLevel(lv)
	}
	return l, closeFn
}
