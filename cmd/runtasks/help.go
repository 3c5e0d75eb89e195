package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// Help groups on the root command.
const (
	groupCommands = "commands"
	groupHooks    = "hooks"
)

// annExit is the annotation holding a command's EXIT STATUS lines.
const annExit = "runtasks/exit-status"

// setExitStatus records the exit statuses a command uses (docs/exit-status.md),
// shown after its usage.
func setExitStatus(cmd *cobra.Command, lines string) {
	cmd.Annotations = map[string]string{annExit: strings.TrimRight(lines, "\n")}
}

// exitStatusTemplate follows cobra's usage with the EXIT STATUS section.
const exitStatusTemplate = `{{with index .Annotations "` + annExit + `"}}
EXIT STATUS
{{.}}
{{end}}`

// hookExitStatus is the EXIT STATUS of the hook commands.
const hookExitStatus = `  0  always: the answer is on stdout, in the agent's protocol (an agent
     reads 2 as "block"); every failure is a systemMessage and a log line`
