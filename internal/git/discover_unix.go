//go:build unix

package git

import (
	"io/fs"
	"os"
	"syscall"
)

// device is the file system a directory is on.
func device(d string) (uint64, bool) {
	fi, err := os.Stat(d)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

// ownedByUs reports whether the current user owns a .git (git refuses a
// repository owned by someone else unless safe.directory says otherwise).
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
