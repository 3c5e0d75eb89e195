package main

import (
	"context"
	"time"

	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/shell"
)

// shellRunner adapts shell.Runner to the engine's CommandRunner.
type shellRunner struct{ r shell.Runner }

func (s shellRunner) Run(ctx context.Context, dir, command string, timeout time.Duration) (engine.CommandResult, error) {
	res, err := s.r.Run(ctx, dir, command, timeout)
	return engine.CommandResult{ExitCode: res.ExitCode, Output: res.Output, TimedOut: res.TimedOut}, err
}
