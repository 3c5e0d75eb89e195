// Command runtasks keeps coding agents working until an epic's beads are done.
package main

import "os"

func main() {
	// The process ends with the command, so its signal handling is never
	// undone: signal.Stop waits for Go's signal loop to go idle, which cost
	// up to a millisecond at the end of every stop hook.
	ctx, _ := signalContext()
	os.Exit(execute(ctx, os.Args[1:], newSystemFactory()))
}
