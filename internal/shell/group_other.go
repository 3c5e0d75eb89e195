//go:build !unix

package shell

import (
	"os"
	"os/exec"
)

// Signal is a signal runtasks sends to a process group; without process
// groups only the program itself is signalled, and any signal kills it.
type Signal int

// The signals runtasks sends.
const (
	Interrupt Signal = iota
	Terminate
	Kill
)

func setpgid(cmd *exec.Cmd) {}

func signalGroup(pid int, sig Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

func groupAlive(pid int) bool { return false }
