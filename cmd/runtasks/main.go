// Command runtasks keeps coding agents working until an epic's beads are done.
package main

import "os"

func main() {
	growMainStack(false)
	// The process ends with the command, so its signal handling is never
	// undone: signal.Stop waits for Go's signal loop to go idle, which cost
	// up to a millisecond at the end of every stop hook.
	ctx, _ := signalContext()
	os.Exit(execute(ctx, os.Args[1:], newSystemFactory()))
}

// mainStack is the stack a command runs in: a stop hook's grew past 16 KB
// (a probe on runtime.copystack saw it copied to 32 KB).
const mainStack = 28 << 10

// growMainStack, called with false, gives the main goroutine a stack of
// at least mainStack at once, while it is shallow. Its frame holds
// mainStack bytes that it never touches: Go checks the stack against the
// frame on entry and grows it. Go grows a stack by copying it whole,
// looking up every frame's tables in the binary; a stop hook's stack
// grew from 4 KB to 32 KB in three copies at growing depths, which cost
// it about 0.1 ms at every stop (docs/benchmarks.md).
//
//go:noinline
func growMainStack(use bool) byte {
	if use {
		var frame [mainStack]byte
		return keep(frame[:])
	}
	return 0
}

//go:noinline
func keep(b []byte) byte { return b[len(b)-1] }
