package state

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// inPlaceMax is the largest state rewritten in place (rewriteInPlace): a
// page. Linux's write path checks for a fatal signal before each page it
// copies, never inside one, so a write at offset 0 of at most a page is
// whole or absent when its writer is killed.
const inPlaceMax = 4096

// openNoFollow refuses a symbolic link where a state file is rewritten.
const openNoFollow = syscall.O_NOFOLLOW

// A state rewritten in place is copied into the page cache while readers
// without the session's lock (status, Get) may be copying it out: the
// writer holds an exclusive flock on the state file itself during its
// write, and those readers a shared one during their read. Both hold it
// for a copy of a few kilobytes, and neither waits long: a writer that
// cannot have it within flockTries milliseconds (or on a file system
// without flock) writes through a rename instead, and a reader reads
// without it: a writer that kept it that long is stopped outside its
// write (a write of a page is not interrupted halfway), so the file is
// whole.
const flockTries = 50

func lockForWrite(f *os.File) bool { return flockSoon(f, syscall.LOCK_EX) }

func lockForRead(f *os.File) { flockSoon(f, syscall.LOCK_SH) }

// flockSoon waits only while the lock is held: a file system without
// flock (ENOLCK, EINVAL) is not waited on.
func flockSoon(f *os.File, how int) bool {
	for try := 0; try < flockTries; try++ {
		if try > 0 {
			time.Sleep(time.Millisecond)
		}
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return true
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return false
		}
	}
	return false
}
