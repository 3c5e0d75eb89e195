//go:build unix

package shell

import (
	"os/exec"
	"syscall"
)

// setGroup runs the command in its own process group and kills the whole
// group on cancel, so `sh -c "go test ./..."` leaves no children behind.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
