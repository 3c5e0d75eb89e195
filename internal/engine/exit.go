package engine

import "github.com/runtasks/runtasks/internal/state"

// Exit statuses: one vocabulary for every runtasks command (each command's
// --help lists the ones it uses; docs/exit-status.md lists them all). The
// hook commands always exit 0: their answer is on stdout.
const (
	ExitOK          = 0   // done: the work is complete, or the command succeeded
	ExitFailed      = 1   // failed: runtasks or the agent failed while running
	ExitWorkLeft    = 2   // work left: a block, an incomplete check, a limit reached with work left
	ExitNeedsPerson = 3   // needs a person: only blocked work, no progress, or nothing to judge
	ExitUsage       = 4   // usage or setup error: flags, configuration, bd or a check that cannot run
	ExitInterrupted = 130 // interrupted (Ctrl-C, SIGTERM, SIGHUP): what was started was stopped
)

// ExitStatus is the exit status of a command ending on a decision of class c.
func ExitStatus(c state.Class) int {
	switch c {
	case state.ClassDone, state.ClassPaused:
		return ExitOK
	case state.ClassWorkLeft:
		return ExitWorkLeft
	case state.ClassNeedsPerson, state.ClassIgnored:
		return ExitNeedsPerson
	}
	return ExitUsage
}
