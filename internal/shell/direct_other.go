//go:build !unix

package shell

import (
	"context"
	"os/exec"
	"time"
)

// RunDirect runs cmd (made with exec.CommandContext(ctx, …)) with
// NewContextGroup: without process groups there is no cheaper way.
func RunDirect(ctx context.Context, cmd *exec.Cmd, first Signal, grace time.Duration) error {
	g := NewContextGroup(cmd, first, grace)
	err := cmd.Run()
	g.Reap()
	return err
}
