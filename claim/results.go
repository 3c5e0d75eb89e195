package claim

import (
	"errors"
	"path/filepath"

	"github.com/runtasks/runtasks/agentfile"
	"github.com/runtasks/runtasks/orchestrator"
)

// ResultsProblem says why a claim's RESULTS.md cannot be judged: an
// *agentfile.Error for a file that is not a regular file (a FIFO, a
// device, a directory) or is larger than agentfile.MaxText. It is nil for
// a readable file and for a missing one (that is "not written yet"). Such
// a file is read as not written (orchestrator.UntouchedResults); this is
// what to tell the agent and the user about it.
func ResultsProblem(c orchestrator.ClaimedRun) error {
	if c.RunDir == "" {
		return nil
	}
	_, err := agentfile.Read(filepath.Join(c.RunDir, orchestrator.ResultsFile), agentfile.MaxText)
	var ae *agentfile.Error
	if errors.As(err, &ae) {
		return ae
	}
	return nil
}
