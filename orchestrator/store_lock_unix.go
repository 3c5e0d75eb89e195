//go:build unix

package orchestrator

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

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
