package beads

// UseMemoryFiles sets whether bd's output goes through memory files (where
// the system has them) or pipes, and returns what restores it.
func UseMemoryFiles(on bool) (restore func()) {
	was := memoryFiles
	memoryFiles = on
	return func() { memoryFiles = was }
}
