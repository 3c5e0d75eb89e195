package beadstest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the test process
// dies (a test binary killed at its timeout leaves no server behind).
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
