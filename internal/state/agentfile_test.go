package state

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentFiles makes, in dir, the files an agent can put where runtasks
// reads: a FIFO without a writer and a symlink to /dev/zero.
func agentFiles(t *testing.T, dir string) (fifo, zero string) {
	t.Helper()
	fifo, zero = filepath.Join(dir, "fifo"), filepath.Join(dir, "zero")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	return fifo, zero
}

func returnsWithin(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

// TestRecordsDecisionLogNotRegular: a decision log replaced by a FIFO or
// /dev/zero is an error, at once.
func TestRecordsDecisionLogNotRegular(t *testing.T) {
	for _, target := range []string{"fifo", "zero"} {
		t.Run(target, func(t *testing.T) {
			dir := t.TempDir()
			fifo, zero := agentFiles(t, dir)
			state := filepath.Join(dir, "state")
			os.MkdirAll(state, 0o755)
			src := map[string]string{"fifo": fifo, "zero": zero}[target]
			if err := os.Symlink(src, filepath.Join(state, DecisionLog)); err != nil {
				t.Fatal(err)
			}
			s := &Store{Dir: state}
			for _, limit := range []int{0, 5} {
				var err error
				returnsWithin(t, "Records", func() { _, err = s.Records(RecordFilter{Limit: limit}) })
				if err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("Records(limit %d) = %v", limit, err)
				}
			}
		})
	}
}

// TestUntouchedResultsNotRegular: a RESULTS.md that is a FIFO or /dev/zero
// is judged as not written, at once.
func TestUntouchedResultsNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := agentFiles(t, dir)
	for _, src := range []string{fifo, zero} {
		run := t.TempDir()
		if err := os.Symlink(src, filepath.Join(run, ResultsFile)); err != nil {
			t.Fatal(err)
		}
		claims := []ClaimedRun{{Task: "t-1", RunDir: run, ResultsSHA256: ResultsDigest([]byte("template"))}}
		var got []ClaimedRun
		returnsWithin(t, "UntouchedResults", func() { got = UntouchedResults(claims) })
		if len(got) != 1 {
			t.Errorf("%s: UntouchedResults = %v, want the claim", filepath.Base(src), got)
		}
	}
}
