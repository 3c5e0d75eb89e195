package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logfmt/logfmt"

	"github.com/runtasks/runtasks/internal/config"
)

// The log's prefix and time format, the same in every runtasks logger.
const (
	logPrefix     = "runtasks"
	logTimeFormat = "2006/01/02 15:04:05"
)

// hookLogger is the hook commands' logger. It writes logfmt lines (time,
// level, prefix, msg, then the key-value pairs), the lines charm log's
// LogfmtFormatter writes for a person's command in the same log file
// (TestHookLogSameAsCharm), to cfg.Log.File when set (appending, with the
// time), else to stderr. It is built, and its file opened, only when a
// line passes its level: most stops log nothing at the default level
// (warn). It leaves out charm log, whose terminal styling packages cost
// every process that links them at start (docs/benchmarks.md).
type hookLogger struct {
	cfg       *config.Config
	stderr    io.Writer
	flagLevel string
	now       func() time.Time

	w       io.Writer // nil until the first line
	timed   bool
	closeFn func()
}

func newHookLogger(cfg *config.Config, stderr io.Writer, flagLevel string) *hookLogger {
	return &hookLogger{cfg: cfg, stderr: stderr, flagLevel: flagLevel, now: time.Now}
}

// Log levels, with charm log's and slog's values.
const (
	logDebug = slog.LevelDebug
	logInfo  = slog.LevelInfo
	logWarn  = slog.LevelWarn
	logError = slog.LevelError
)

// logLevels are the level names log.level and --log-level take.
var logLevels = map[string]slog.Level{"debug": logDebug, "info": logInfo, "warn": logWarn, "error": logError, "fatal": logError + 4}

// logLevelName is the level every runtasks logger takes: --log-level,
// else log.level, else warn.
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

// level is the logger's level (logLevelName); a name it does not know
// leaves info (as charm log does).
func (l *hookLogger) level() slog.Level {
	if lv, ok := logLevels[strings.ToLower(logLevelName(l.cfg, l.flagLevel))]; ok {
		return lv
	}
	return logInfo
}

// open picks the log's writer: the log file when set and it opens, else
// stderr.
func (l *hookLogger) open() {
	l.w, l.closeFn = l.stderr, func() {}
	if f := openLogFile(l.cfg); f != nil {
		l.w, l.timed, l.closeFn = f, true, func() { f.Close() }
	}
}

// Log writes one line at lvl.
func (l *hookLogger) Log(lvl slog.Level, msg any, keyvals ...any) {
	if lvl < l.level() {
		return
	}
	if l.w == nil {
		l.open()
	}
	l.w.Write(logfmtLine(l.timed, l.now(), lvl, msg, keyvals...))
}

func (l *hookLogger) Debug(msg any, keyvals ...any) { l.Log(logDebug, msg, keyvals...) }
func (l *hookLogger) Info(msg any, keyvals ...any)  { l.Log(logInfo, msg, keyvals...) }
func (l *hookLogger) Warn(msg any, keyvals ...any)  { l.Log(logWarn, msg, keyvals...) }
func (l *hookLogger) Error(msg any, keyvals ...any) { l.Log(logError, msg, keyvals...) }

// Close releases the log file, if one was opened.
func (l *hookLogger) Close() {
	if l.closeFn != nil {
		l.closeFn()
	}
}

// logfmtLine is one log line as charm log's LogfmtFormatter writes it:
// time (when timed), level, prefix, msg (when not empty), the pairs (a
// missing value is charm's "missing value" error), values logfmt cannot
// encode as %+v.
func logfmtLine(timed bool, t time.Time, lvl slog.Level, msg any, keyvals ...any) []byte {
	var b strings.Builder
	e := logfmt.NewEncoder(&b)
	kvs := make([]any, 0, 8+len(keyvals)+1)
	if timed {
		kvs = append(kvs, "time", t.Format(logTimeFormat))
	}
	kvs = append(kvs, "level", levelName(lvl), "prefix", logPrefix)
	if msg != nil {
		if m := fmt.Sprint(msg); m != "" {
			kvs = append(kvs, "msg", m)
		}
	}
	kvs = append(kvs, keyvals...)
	if len(keyvals)%2 != 0 {
		kvs = append(kvs, errMissingValue)
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		key := kvs[i]
		if k := fmt.Sprint(key); k != "" {
			key = k
		}
		if err := e.EncodeKeyval(key, kvs[i+1]); err != nil && errors.Is(err, logfmt.ErrUnsupportedValueType) {
			e.EncodeKeyval(key, fmt.Sprintf("%+v", kvs[i+1]))
		}
	}
	e.EndRecord()
	return []byte(b.String())
}

// errMissingValue stands for the value of a key given without one (charm
// log's ErrMissingValue).
var errMissingValue = errors.New("missing value")

// levelName is the level's name in a line.
func levelName(lvl slog.Level) string {
	switch {
	case lvl >= logError+4:
		return "fatal"
	case lvl >= logError:
		return "error"
	case lvl >= logWarn:
		return "warn"
	case lvl >= logInfo:
		return "info"
	}
	return "debug"
}
