package notify

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
)

// Send dispatches a stop's event to the commands that ask for it, if gate
// lets their source run them, to a detached runtasks (self, looked up only
// when there are commands) and returns at once with the event dispatched
// ("" for none).
func Send(cfg *config.Config, src *config.Sources, gate func(*config.Config, *config.Sources) bool, in engine.Input, dec engine.Decision, now time.Time,
	self func() (string, error), args, environ []string) (string, error) {
	event := EventFor(dec)
	if event == "" {
		return "", nil
	}
	cmds := slices.DeleteFunc(slices.Clone(cfg.Workflow.Notify), func(n config.Notify) bool { return !slices.Contains(n.Events, event) })
	if len(cmds) == 0 {
		return "", nil
	}
	if gate == nil || !gate(cfg, src) {
		return "", fmt.Errorf("workflow.notify is not run: %s is not trusted to run commands from a hook (set it with --config on the hook's command line, or trust the project)", src.Of("workflow.notify"))
	}
	if err := os.MkdirAll(cfg.StateDir(), 0o755); err != nil {
		return "", err
	}
	bin, err := self()
	if err != nil {
		return "", err
	}
	job := Job{Event: NewEvent(event, in, dec, cfg.Root, now), Commands: cmds, Dir: cfg.Root, Log: filepath.Join(cfg.StateDir(), "notify.log")}
	data, err := json.Marshal(job)
	if err != nil {
		return "", err
	}
	if len(data) > MaxJob {
		return "", fmt.Errorf("notify job of %d bytes (at most %d)", len(data), MaxJob)
	}
	// bin runs args (the hidden notify-run command) in a session of its
	// own: its own process group, no controlling terminal, untouched by
	// signals sent to the hook's group. It gets the job through a pipe.
	cmd := exec.Command(bin, args...)
	w, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	cmd.Env = environ
	cmd.Dir = job.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil { // closes both ends of the pipe
		return "", fmt.Errorf("start %s: %w", bin, err)
	}
	// Written after the start, so a failed start leaves no writer blocked.
	_, werr := w.Write(data)
	w.Close()
	_ = cmd.Process.Release()
	if werr != nil {
		return "", fmt.Errorf("hand the event to the notify process: %w", werr)
	}
	return event, nil
}
