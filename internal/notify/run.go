package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/shell"
)

// Dispatch hands job to a detached process: self (the runtasks binary)
// with args (the hidden notify-run command), in a session and process
// group of its own, reading the job from a pipe. It returns as soon as the
// process started; it never waits for the commands.
func Dispatch(job Job, self string, args []string, environ []string) error {
	data, err := job.marshal()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(self, args...)
	cmd.Stdin = r
	cmd.Env = environ
	cmd.Dir = job.Dir
	detach(cmd)
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start %s: %w", self, err)
	}
	// The job is written after the start, so a failed start leaves no
	// writer blocked; the child reads it at once.
	_, werr := w.Write(data)
	w.Close()
	_ = cmd.Process.Release()
	if werr != nil {
		return fmt.Errorf("hand the event to the notify process: %w", werr)
	}
	return nil
}

// ReadJob reads a job from r (bounded).
func ReadJob(r io.Reader) (Job, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxJob+1))
	if err != nil {
		return Job{}, err
	}
	if len(data) > MaxJob {
		return Job{}, fmt.Errorf("notify job larger than %d bytes", MaxJob)
	}
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return Job{}, fmt.Errorf("notify job: %w", err)
	}
	return j, nil
}

// Outcome is how one command ended.
type Outcome struct {
	Run      string
	OK       bool
	Detail   string // the exit status, the timeout, or what could not start
	Elapsed  time.Duration
	TimedOut bool
}

// Run runs the job's commands side by side, each within its timeout and
// in its own process group, and returns how each ended. Each gets the
// event as JSON on stdin and as RUNTASKS_* variables added to environ.
func Run(ctx context.Context, job Job, environ []string) []Outcome {
	event, _ := json.Marshal(job.Event)
	event = append(event, '\n')
	env := append(append([]string(nil), environ...), job.Event.Env()...)
	out := make([]Outcome, len(job.Commands))
	var wg sync.WaitGroup
	for i, n := range job.Commands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			timeout := n.Timeout
			if timeout <= 0 {
				timeout = config.NotifyTimeout
			}
			res, err := shell.Runner{Env: env, Stdin: event}.Run(ctx, job.Dir, n.Run, timeout)
			o := Outcome{Run: n.Run, Elapsed: res.Elapsed}
			switch {
			case err != nil:
				o.Detail = err.Error()
			case res.TimedOut:
				o.TimedOut, o.Detail = true, fmt.Sprintf("timed out after %s; its process group was stopped", timeout)
			case res.ExitCode != 0:
				o.Detail = fmt.Sprintf("exit status %d", res.ExitCode)
			default:
				o.OK = true
			}
			if !o.OK {
				if t := lastLine(res.Output); t != "" {
					o.Detail += ": " + t
				}
			}
			out[i] = o
		}()
	}
	wg.Wait()
	return out
}

// Log appends a line per command to the job's log: failures always, the
// rest too (a person checking a recipe wants to see it ran).
func Log(job Job, outcomes []Outcome) error {
	if job.Log == "" {
		return errors.New("no notify log")
	}
	f, err := os.OpenFile(job.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var b strings.Builder
	for _, o := range outcomes {
		status := "ok"
		if !o.OK {
			status = "FAILED: " + o.Detail
		}
		fmt.Fprintf(&b, "%s %s session=%s epic=%s %q %s (%s)\n", time.Now().UTC().Format(time.RFC3339), job.Event.Event,
			job.Event.Session, job.Event.Epic, o.Run, status, o.Elapsed.Round(time.Millisecond))
	}
	_, err = f.WriteString(b.String())
	return err
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if r := []rune(l); len(r) > 200 {
		l = string(r[:200]) + "…"
	}
	return l
}
