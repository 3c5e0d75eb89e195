//go:build unix

package notify

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a new session: its own process group, no
// controlling terminal, untouched by signals sent to the hook's group.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
