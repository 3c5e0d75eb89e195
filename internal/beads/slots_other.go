//go:build !unix

package beads

import "os"

// tryLock without flock(2): every slot is free (no bound).
func tryLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func unlock(f *os.File) { f.Close() }
