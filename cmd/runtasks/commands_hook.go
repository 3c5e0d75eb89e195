//go:build runtasks_hook

package main

import "github.com/spf13/cobra"

// userCommands: the hook-only build, runtasks-hook (`go build -tags
// runtasks_hook`), has only the hook commands. It is what install writes
// into the agents' settings when it sits beside runtasks: it leaves out
// the packages only people's commands use (the jq engine, the terminal
// screens, the diff and HTML engines), whose start-up Go pays in every
// process that links them (docs/benchmarks.md).
func userCommands(*Factory) []*cobra.Command { return nil }
