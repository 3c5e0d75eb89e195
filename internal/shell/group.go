package shell

import (
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Signal is a signal runtasks sends to a process group.
type Signal = syscall.Signal

// The signals runtasks sends.
const (
	Interrupt = syscall.SIGINT
	Terminate = syscall.SIGTERM
	Kill      = syscall.SIGKILL
)

// Group is a program runtasks started in a process group of its own, so
// that stopping it stops everything it started (an agent's tool calls and
// the servers they left behind, bd's children): a polite signal, then
// SIGKILL after the grace. With exec.Cmd.WaitDelay set, Wait returns even
// when a process that left the group holds the output pipes.
type Group struct {
	cmd   *exec.Cmd
	grace time.Duration

	mu    sync.Mutex
	timer *time.Timer
}

// WaitMargin is how long after the SIGKILL Wait waits for the pipes before
// it closes them.
const WaitMargin = 500 * time.Millisecond

// NewGroup makes cmd (not yet started) start in its own process group,
// Wait closing its pipes grace and WaitMargin after the program ended.
func NewGroup(cmd *exec.Cmd, grace time.Duration) *Group {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.WaitDelay = grace + WaitMargin
	return &Group{cmd: cmd, grace: grace}
}

// NewContextGroup is NewGroup for exec.CommandContext: when the context is
// done the group is stopped with Stop(first).
func NewContextGroup(cmd *exec.Cmd, first Signal, grace time.Duration) *Group {
	g := NewGroup(cmd, grace)
	cmd.Cancel = func() error {
		g.Stop(first)
		return nil
	}
	return g
}

// Signal sends sig to every process of the group, once it started.
func (g *Group) Signal(sig Signal) {
	if g.pgid() > 0 {
		_ = syscall.Kill(-g.pgid(), sig)
	}
}

// pgid is the group's id (its program's pid), 0 before it started.
func (g *Group) pgid() int {
	if g.cmd.Process == nil {
		return 0
	}
	return g.cmd.Process.Pid
}

// Stop sends sig to the group now and SIGKILL after the grace period.
func (g *Group) Stop(sig Signal) {
	g.Signal(sig)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer == nil {
		g.timer = time.AfterFunc(g.grace, g.Kill)
	}
}

// Kill sends SIGKILL to the group now.
func (g *Group) Kill() {
	g.Signal(Kill)
}

// Reap kills what the program left running in its group; call it once,
// after Wait.
func (g *Group) Reap() {
	g.mu.Lock()
	if g.timer != nil {
		g.timer.Stop()
	}
	g.mu.Unlock()
	g.Kill()
}
