package beads

import (
	"os"

	"golang.org/x/sys/unix"
)

// memoryFile is a file in memory (memfd) for one of bd's outputs: bd
// writes into it directly, so no pipe is read by a goroutine of ours
// while bd runs. nil when the kernel has none (before Linux 3.17, or a
// sandbox refusing the call): bd's output then goes through pipes.
func memoryFile(name string) *os.File {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), name)
}
