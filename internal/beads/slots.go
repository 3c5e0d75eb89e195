package beads

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/runtasks/runtasks/internal/config"
)

// DefaultMaxProcesses is Slots.Max when it is zero: at most this many bd
// processes started by runtasks run at once on one machine (per user).
const DefaultMaxProcesses = 4

// DefaultQueueTimeout is Slots.Wait when it is zero.
const DefaultQueueTimeout = 60 * time.Second

// Slots bound the bd processes every runtasks of the user runs at once on
// this machine: a shared Dolt server stalls under dozens of concurrent bd
// calls, and bd's embedded store serialises them anyway. The bound is a counting semaphore of Max lock files in Dir, each
// held with flock(2) while one bd runs: the kernel drops a lock when its
// holder dies, so a killed runtasks never leaks a slot.
type Slots struct {
	// Dir holds the lock files slot-0 … slot-(Max-1); it is created (0700)
	// on first use. Every runtasks of the machine that should share the
	// bound must use the same Dir (SlotsDir).
	Dir string
	// Max is the number of slots; zero means DefaultMaxProcesses.
	Max int
	// Wait bounds the wait for a free slot; zero means DefaultQueueTimeout.
	Wait time.Duration
}

// SlotsDir is the default Dir for an environment: bd-slots in runtasks'
// cache directory ($XDG_CACHE_HOME/runtasks, else $HOME/.cache/runtasks,
// when absolute), else in the system's temporary directory.
func SlotsDir(environ []string) string {
	switch {
	case filepath.IsAbs(config.LookupEnv(environ, "XDG_CACHE_HOME")):
		return filepath.Join(config.LookupEnv(environ, "XDG_CACHE_HOME"), "runtasks", "bd-slots")
	case filepath.IsAbs(config.LookupEnv(environ, "HOME")):
		return filepath.Join(config.LookupEnv(environ, "HOME"), ".cache", "runtasks", "bd-slots")
	}
	return fallbackSlotsDir()
}

func fallbackSlotsDir() string {
	return filepath.Join(os.TempDir(), "runtasks-"+strconv.Itoa(os.Getuid()), "bd-slots")
}

// ErrNoSlot is returned (wrapped) by Acquire when no slot came free in time.
var ErrNoSlot = errors.New("no bd slot free")

// slotPoll is the longest pause between two rounds of tries.
const slotPoll = 50 * time.Millisecond

// Acquire takes a free slot, waiting at most Wait (or until ctx ends), and
// returns the function that gives it back. A nil *Slots is no bound.
func (s *Slots) Acquire(ctx context.Context) (release func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	n, wait := cmp.Or(s.Max, DefaultMaxProcesses), cmp.Or(s.Wait, DefaultQueueTimeout)
	dir := s.Dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		// A read-only cache directory (a sandbox, a CI image) must not
		// stop runtasks: the system's temporary directory holds them then.
		dir = fallbackSlotsDir()
		if err2 := os.MkdirAll(dir, 0o700); err2 != nil {
			return nil, fmt.Errorf("bd slots: %w; %w", err, err2)
		}
	}
	deadline := time.Now().Add(wait)
	start := rand.IntN(n) // spread the processes over the slots
	for {
		for i := range n {
			f, err := tryLock(filepath.Join(dir, "slot-"+strconv.Itoa((start+i)%n)))
			if err != nil {
				return nil, fmt.Errorf("bd slots: %w", err)
			}
			if f != nil {
				return func() { f.Close() }, nil // closing the file drops the lock
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w within %s: %d bd processes of runtasks already run on this machine (beads.max_processes, beads.queue_timeout; slots in %s)", ErrNoSlot, wait, n, dir)
		}
		// A jittered pause, so that waiters do not retry in step.
		pause := slotPoll/2 + rand.N(slotPoll/2)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// tryLock opens path and takes its exclusive lock without waiting: nil,
// nil when another process (or another open file) holds it.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	// No EINTR: LOCK_NB does not wait, and Go installs its signal handlers
	// with SA_RESTART.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}
