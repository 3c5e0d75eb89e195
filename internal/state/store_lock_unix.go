//go:build unix

package state

import (
	"errors"
	"os"
	"syscall"
)

// flock takes an exclusive flock on f, blocking until it is free.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryFlock takes the lock only if it is free at once: the common case then
// needs no goroutine (and no thread blocked in flock).
func tryFlock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
