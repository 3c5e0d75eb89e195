package state

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/agentfile"
	"github.com/runtasks/runtasks/internal/transcript"
)

// OutcomeReset marks a record of runtasks reset: counters cleared by hand.
const OutcomeReset Outcome = "reset"

// Names inside the state directory.
const (
	// DecisionLog is the append-only decision log, one JSON Record a line.
	DecisionLog = "decisions.jsonl"
	// sessionsDir holds one state file (and one lock file) per (session, epic).
	sessionsDir = "sessions"

	stateExt   = ".json"
	lockExt    = ".lock"
	tmpInfix   = ".tmp-"
	corruptExt = ".corrupt-"
)

// ErrNoSession is returned for an empty session id (callers leave it alone).
var ErrNoSession = errors.New("empty session id")

// Store keeps runtasks' state under one directory: a JSON file per
// (session, epic) and the append-only decision log, safe for concurrent use
// by goroutines and processes. Ids come from the hook's stdin, so they never
// name a file: a file's name is a sanitised prefix and a hash of the ids.
type Store struct {
	Dir      string           // the state directory, created on demand
	Warn     func(msg string) // receives problems recovered from (nil: none)
	Now      func() time.Time // stamps a zero UpdatedAt (default time.Now)
	LockWait time.Duration    // bounds the wait for another process's lock (default 20s)
}

// RecordFilter selects decision-log records. Empty fields match any value.
type RecordFilter struct {
	Session string
	Epic    string
	Limit   int // keep only the last Limit matching records (0 = all)
}

func (s *Store) Warnf(format string, args ...any) {
	if s.Warn != nil {
		s.Warn(fmt.Sprintf(format, args...))
	}
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) sub(name string) (string, error) {
	if s.Dir == "" {
		return "", errors.New("state directory not set")
	}
	return filepath.Join(s.Dir, name), nil
}

func (s *Store) LogPath() string { return filepath.Join(s.Dir, DecisionLog) }

// StatePath is the state file of (session, epic), always directly inside Dir/sessions.
func (s *Store) StatePath(session, epic string) (string, error) {
	if session == "" {
		return "", ErrNoSession
	}
	dir, err := s.sub(sessionsDir)
	return filepath.Join(dir, stateName(session, epic)), err
}

// stateName derives a file name from the ids: readable prefixes limited to
// [A-Za-z0-9_-] and a hash of the length-prefixed ids (so no two pairs of
// ids share a name, and no id can add a separator or "..").
func stateName(session, epic string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:%s", len(session), session, len(epic), epic)
	sum := hex.EncodeToString(h.Sum(nil))[:32]
	return SafeName(session, 24, "-") + "_" + SafeName(epic, 24, "-") + "_" + sum + stateExt
}

// SafeName cuts id to max bytes and replaces each byte that is not an
// ASCII letter, a digit or one of keep with '_'.
func SafeName(id string, max int, keep string) string {
	b := []byte(id[:min(len(id), max)])
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0) {
			b[i] = '_'
		}
	}
	return string(b)
}

// Update loads the state of (session, epic), calls fn on it and writes it
// back atomically under the session's lock, so concurrent updates never
// lose one another's changes. If fn fails nothing is written and its error
// is returned as is. A corrupt file is moved aside and fn sees a fresh state.
func (s *Store) Update(session, epic string, fn func(*State) error) (State, error) {
	path, err := s.StatePath(session, epic)
	if err != nil {
		return State{}, err
	}
	read := func() (State, error) { return s.readLocked(path, session, epic) }
	return rewrite(s, path, read, fn, func(st *State) error {
		st.Session, st.Epic = session, epic
		if st.UpdatedAt.IsZero() {
			st.UpdatedAt = s.now()
		}
		// What is returned is what a later Get reads.
		st.UpdatedAt, st.FirstBlockAt = st.UpdatedAt.UTC().Round(0), st.FirstBlockAt.UTC().Round(0)
		// One line of JSON with <, > and & unescaped (the last reason holds
		// them; escaped, they cost size).
		var data bytes.Buffer
		enc := json.NewEncoder(&data)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(st); err != nil {
			return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
		}
		return writeFileAtomic(path, data.Bytes(), false, false)
	})
}

// rewrite makes path's directory and, under path's lock, reads the file
// (read), calls fn on it and stores what fn left (put). If fn fails
// nothing is stored and its error is returned as is.
func rewrite[T any](s *Store, path string, read func() (T, error), fn func(*T) error, put func(*T) error) (T, error) {
	var zero T
	if err := s.mkdir(filepath.Dir(path)); err != nil {
		return zero, err
	}
	unlock, err := s.lock(path)
	if err != nil {
		return zero, err
	}
	defer unlock()
	v, err := read()
	if err == nil {
		err = fn(&v)
	}
	if err == nil {
		err = put(&v)
	}
	if err != nil {
		return zero, err
	}
	return v, nil
}

// Get reads the state of (session, epic), fresh when none; a corrupt file is moved aside.
func (s *Store) Get(session, epic string) (State, error) {
	path, err := s.StatePath(session, epic)
	if err != nil {
		return State{}, err
	}
	st, err := readState(path, session, epic)
	if !errors.Is(err, errCorrupt) {
		return st, err
	}
	// Corrupt: re-read under the lock, so that a good file written
	// meanwhile is never moved aside.
	unlock, lerr := s.lock(path)
	if lerr != nil {
		s.Warnf("%v; using a fresh state", err)
		return State{Session: session, Epic: epic}, nil
	}
	defer unlock()
	return s.readLocked(path, session, epic)
}

var errCorrupt = errors.New("corrupt state file")

func readState(path, session, epic string) (State, error) {
	return readFile(path, "state", State{Session: session, Epic: epic}, func(s State) string {
		return fmt.Sprintf("session %q epic %q", s.Session, s.Epic)
	})
}

// readFile reads a state or binding file (fresh when there is none);
// errCorrupt wraps one that does not decode or holds other ids.
func readFile[T any](path, what string, fresh T, ids func(T) string) (T, error) {
	var v, zero T
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return zero, fmt.Errorf("%w %s: %v", errCorrupt, path, err)
	}
	if got := ids(v); got != ids(fresh) {
		return zero, fmt.Errorf("%w %s: it holds %s", errCorrupt, path, got)
	}
	return v, nil
}

// readLocked reads the state under the lock, moving a corrupt file aside.
func (s *Store) readLocked(path, session, epic string) (State, error) {
	st, err := readState(path, session, epic)
	if !errors.Is(err, errCorrupt) {
		return st, err
	}
	aside := fmt.Sprintf("%s%s%d", path, corruptExt, s.now().Unix())
	for i := 1; ; i++ {
		if _, serr := os.Lstat(aside); errors.Is(serr, fs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s%s%d.%d", path, corruptExt, s.now().Unix(), i)
	}
	if rerr := os.Rename(path, aside); rerr != nil {
		s.Warnf("%v; could not move it aside: %v; starting a fresh state", err, rerr)
	} else {
		s.Warnf("%v; moved to %s; starting a fresh state", err, filepath.Base(aside))
	}
	return State{Session: session, Epic: epic}, nil
}

// writeFileAtomic writes data to path through a temp file and a rename, so
// a killed process leaves the old file or the new one. The caller holds
// path's lock and the temp file has one name (the next writer replaces a
// killed one's), unless shared: unlocked writers each write their own and
// the last rename wins. Only a durable write (a binding) syncs: a state is
// rewritten at every stop and an fsync costs more than the stop; a power
// cut may leave it corrupt, and it is moved aside (docs/state.md).
func writeFileAtomic(path string, data []byte, durable, shared bool) error {
	var tmp *os.File
	var err error
	if shared {
		tmp, err = os.CreateTemp(filepath.Dir(path), filepath.Base(path)+tmpInfix+"*")
	} else {
		tmp, err = os.OpenFile(path+tmpInfix+"w", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(0o644) // whatever the umask or a leftover file's mode
	}
	if werr == nil && durable {
		werr = tmp.Sync()
	}
	werr = errors.Join(werr, tmp.Close())
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", filepath.Base(path), werr)
	}
	if durable {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync() // failure only weakens durability
			d.Close()
		}
	}
	return nil
}

// removeTemps deletes temp files a killed writer left for path. The caller
// holds path's lock, so no live writer owns them.
func removeTemps(path string) {
	matches, _ := filepath.Glob(strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`).Replace(path) + tmpInfix + "*")
	for _, m := range matches {
		os.Remove(m)
	}
}

// lock takes the exclusive flock on <state>.lock, waiting at most LockWait;
// a lock file removed meanwhile (Clear) is locked afresh. Closing the file
// releases its lock (no other descriptor shares it: Go opens it close-on-exec).
func (s *Store) lock(path string) (unlock func(), err error) {
	wait := cmp.Or(s.LockWait, 20*time.Second)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	lockPath := strings.TrimSuffix(path, stateExt) + lockExt
	for {
		f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock state: %w", err)
		}
		if !tryFlock(f) {
			// A blocking flock queues fairly and wakes at once; it cannot be
			// interrupted, so on timeout it is left to finish and release.
			done := make(chan error, 1)
			go func() { done <- flock(f) }()
			select {
			case err := <-done:
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("lock state %s: %w", lockPath, err)
				}
			case <-timer.C:
				go func() {
					<-done
					f.Close()
				}()
				return nil, fmt.Errorf("lock state %s: still held by another runtasks after %s", lockPath, wait)
			}
		}
		// Removed or replaced while we waited: lock the file now there.
		held, herr := f.Stat()
		now, nerr := os.Stat(lockPath)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return func() { f.Close() }, nil
		}
		f.Close()
	}
}

// List reads every state, most recently updated first, skipping (Warn) bad files.
func (s *Store) List() ([]State, error) {
	out, err := listFiles(s, sessionsDir, "state", func(st State, name string) bool {
		return st.Session != "" && stateName(st.Session, st.Epic) == name
	})
	slices.SortStableFunc(out, func(a, b State) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), cmp.Compare(a.Session, b.Session), cmp.Compare(a.Epic, b.Epic))
	})
	return out, err
}

// listFiles reads the files of sub (no temp files), reading them without
// the lock (a rename replaces one whole) and skipping (Warn) one that does
// not decode or is not the file its name says.
func listFiles[T any](s *Store, sub, what string, named func(v T, name string) bool) ([]T, error) {
	dir, err := s.sub(sub)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list %ss: %w", what, err)
	}
	var out []T
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, stateExt) || strings.Contains(name, tmpInfix) {
			continue
		}
		var v T
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // reset meanwhile
		}
		if err == nil {
			err = json.Unmarshal(data, &v)
		}
		if err == nil && !named(v, name) {
			err = errors.New("not the " + what + " its name says")
		}
		if err != nil {
			s.Warnf("%v %s: %v; skipped", errCorrupt, path, err)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

// Clear removes the states matching session and epic ("" matches any) and returns them.
func (s *Store) Clear(session, epic string) ([]State, error) {
	states, err := s.List()
	if err != nil {
		return nil, err
	}
	var cleared []State
	for _, st := range states {
		if (session != "" && st.Session != session) || (epic != "" && st.Epic != epic) {
			continue
		}
		old, removed, err := s.remove(st.Session, st.Epic)
		if err != nil {
			return cleared, err
		}
		if removed {
			cleared = append(cleared, old)
		}
	}
	return cleared, nil
}

// remove deletes one listed state's file, its temp files and its lock file.
func (s *Store) remove(session, epic string) (State, bool, error) {
	path := filepath.Join(s.Dir, sessionsDir, stateName(session, epic))
	unlock, err := s.lock(path)
	if err != nil {
		return State{}, false, err
	}
	defer unlock()
	removeTemps(path)
	st, err := readState(path, session, epic)
	if err != nil && !errors.Is(err, errCorrupt) {
		return State{}, false, err
	}
	if err := os.Remove(path); errors.Is(err, fs.ErrNotExist) {
		return State{}, false, nil
	} else if err != nil {
		return State{}, false, fmt.Errorf("reset state: %w", err)
	}
	// Waiters on this lock file notice it is gone and lock a new one.
	os.Remove(strings.TrimSuffix(path, stateExt) + lockExt)
	return st, true, nil
}

// Append adds one record to the decision log with a single O_APPEND write,
// so records appended concurrently never interleave.
func (s *Store) Append(r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	line = append(line, '\n')
	if err := EnsureStateDir(s.Dir); err != nil {
		return err
	}
	f, err := os.OpenFile(s.LogPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(line)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("decision log: %w", err)
	}
	return nil
}

// maxLogLine bounds a decision-log line; a longer one is not read.
const maxLogLine = 1 << 30

// Records reads the decision log, oldest first, keeping the records f
// selects. It reads backwards from the end and stops at f.Limit records, so
// its cost does not grow with the log. Corrupt lines are skipped (one Warn).
func (s *Store) Records(f RecordFilter) ([]Record, error) {
	file, fi, err := agentfile.Open(s.LogPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	defer file.Close()
	var (
		out      []Record // newest first
		bad      int
		firstOff int64 // the first corrupt line in the file: the last one read
		firstErr error
	)
	sc := transcript.NewReverseScanner(file, fi.Size(), maxLogLine)
	for (f.Limit <= 0 || len(out) < f.Limit) && sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			bad, firstOff, firstErr = bad+1, sc.Offset(), err
			continue
		}
		if (f.Session == "" || r.Session == f.Session) && (f.Epic == "" || r.Epic == f.Epic) {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	if bad > 0 {
		s.Warnf("%s: skipped %d corrupt line(s) (first at byte %d: %v)", s.LogPath(), bad, firstOff, firstErr)
	}
	slices.Reverse(out)
	return out, nil
}
