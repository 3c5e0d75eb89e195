package notify

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
)

// Send dispatches a stop's event to the commands that ask for it, if gate
// lets their source run them, and returns the event dispatched ("" for
// none); self is looked up only when there are commands.
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
	if err := Dispatch(job, bin, args, environ); err != nil {
		return "", err
	}
	return event, nil
}
