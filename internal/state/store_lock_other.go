//go:build !unix

package state

import (
	"errors"
	"os"
)

// flock: file locking is implemented for unix systems only; without it no
// update can be made safely, so Update fails and callers fail open.
func flock(f *os.File) error { return errors.ErrUnsupported }

func tryFlock(f *os.File) bool { return false }

func unlockFile(f *os.File) {}
