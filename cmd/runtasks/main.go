// Command runtasks keeps coding agents working until an epic's beads are done.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], newSystemFactory()))
}
