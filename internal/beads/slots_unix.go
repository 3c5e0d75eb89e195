//go:build unix

package beads

import (
	"errors"
	"os"
	"syscall"
)

// tryLock opens path and takes its exclusive lock without waiting: nil,
// nil when another process (or another open file) holds it.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}

// unlock releases the lock (closing the file drops it).
func unlock(f *os.File) { f.Close() }
