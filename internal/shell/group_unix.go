//go:build unix

package shell

import (
	"errors"
	"os/exec"
	"syscall"
)

// Signal is a signal runtasks sends to a process group.
type Signal = syscall.Signal

// The signals runtasks sends.
const (
	Interrupt = syscall.SIGINT
	Terminate = syscall.SIGTERM
	Kill      = syscall.SIGKILL
)

func setpgid(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func signalGroup(pgid int, sig Signal) error {
	if pgid <= 0 {
		return errors.New("no process group")
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nothing left
	}
	return err
}

func groupAlive(pgid int) bool {
	return pgid > 0 && syscall.Kill(-pgid, 0) == nil
}
