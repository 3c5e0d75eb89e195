//go:build !linux

package beads

import "os"

// memoryFile: only Linux has memory files; bd's output goes through pipes.
func memoryFile(string) *os.File { return nil }
