package headless

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
)

// Agents runtasks run can drive.
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
)

// Session modes (run.session).
const (
	SessionFresh  = "fresh"
	SessionResume = "resume"
)

// Command is the argument list (without the binary) that starts one
// non-interactive run of agent (newRunner refuses all but claude and
// codex); only Codex resumes (resumeID). The prompt
// comes after "--", so a prompt starting with "-" is never an option and a
// variadic option in extra (--allowedTools A B) cannot swallow it.
//
//	claude -p --output-format stream-json --verbose EXTRA… -- PROMPT
//	codex exec --json EXTRA… -- PROMPT
//	codex exec --json EXTRA… resume SESSION_ID -- PROMPT
func Command(agent, prompt, resumeID string, extra []string) []string {
	args := map[string][]string{AgentClaude: {"-p", "--output-format", "stream-json", "--verbose"}, AgentCodex: {"exec", "--json"}}[agent]
	args = append(args, extra...)
	if agent == AgentCodex && resumeID != "" {
		args = append(args, "resume", resumeID)
	}
	return append(args, "--", prompt)
}

// MaxLine is the longest event line parsed (8 MiB); a longer one is kept in
// the cycle's log, not parsed, so memory stays flat whatever the agent prints.
const MaxLine = 8 << 20

// PromptFile, in a run's folder, is the prompt its agent was last given
// (a worker's: its task; status --watch shows it).
const PromptFile = "prompt.md"

// runAgent starts one agent run in its own process group, follows its event
// stream and waits for it; what it left in its group (`sleep 600 &`) then
// gets SIGTERM, then SIGKILL. It returns within Grace and about a second of
// ctx's end, even when a process outside the group holds the stream.
func (r *runner) runAgent(ctx context.Context, cycle int, prompt, resumeID string) (CycleRecord, Summary, error) {
	name := fmt.Sprintf("cycle-%03d", cycle)
	rec := CycleRecord{N: cycle, StartedAt: r.o.Now(), Resumed: resumeID != "", Log: name + ".jsonl", ExitCode: -1}
	var sum Summary
	if err := os.WriteFile(filepath.Join(r.dir, PromptFile), []byte(prompt), 0o600); err != nil {
		r.log.Warn("prompt record", "err", err)
	}
	// The event stream's log and stderr's, readable by their owner only.
	var logs [2]*os.File
	for i, ext := range []string{".jsonl", ".stderr"} {
		f, err := os.OpenFile(filepath.Join(r.dir, name+ext), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
		if err != nil {
			return rec, sum, fmt.Errorf("event log: %w", err)
		}
		defer f.Close()
		logs[i] = f
	}
	events, stderr := logs[0], logs[1]
	pr, pw, err := os.Pipe()
	if err != nil {
		return rec, sum, err
	}
	defer pr.Close()

	cmd := exec.Command(r.bin, Command(r.agent, prompt, resumeID, r.o.Args)...)
	cmd.Dir = cmp.Or(r.workDir, r.cfg.Root)
	cmd.Env = r.o.Environ
	cmd.Stdout, cmd.Stderr = pw, stderr
	g := shell.NewGroup(cmd, r.o.Grace)
	r.p.Printf("%s · starting %s%s", r.p.head(), r.agent, map[bool]string{true: " (resuming " + resumeID + ")", false: ""}[resumeID != ""])
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return rec, sum, fmt.Errorf("start %s: %w", r.bin, err)
	}
	r.agentRunning.Store(true)
	read := make(chan struct{})
	go func() {
		defer close(read)
		r.readEvents(pr, events, r.parse, &sum)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	waitErr, stopping := r.supervise(ctx, g, exited)
	r.agentRunning.Store(false)
	r.p.Action("agent exited; reading beads", true)
	// The agent is gone; end what it left in its group, and the stream.
	linger := 2 * time.Second // for what it left in its group, after SIGTERM
	if stopping {
		linger = 300 * time.Millisecond
	}
	g.Signal(shell.Terminate) // a no-op on an empty group
	select {
	case <-read:
	case <-time.After(linger):
		g.Kill()
		select {
		case <-read:
		case <-time.After(shell.WaitMargin):
			pr.Close() // a process outside the group holds the stream
			<-read
		}
	}
	g.Reap()

	rec.SessionID, rec.Events, rec.Error = sum.SessionID, sum.Events, sum.Error
	rec.Final = oneLine(sum.FinalMessage, 500)
	rec.Duration = r.o.Now().Sub(rec.StartedAt).Round(time.Millisecond).String()
	if cmd.ProcessState != nil {
		rec.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return rec, sum, nil // the caller reports the interrupt or the deadline
	}
	if waitErr != nil {
		tail := sum.Error
		if tail == "" { // the last line of its stderr
			b := make([]byte, 4096)
			size, _ := stderr.Seek(0, io.SeekEnd)
			n, _ := stderr.ReadAt(b, max(size-int64(len(b)), 0))
			s := strings.TrimSpace(string(b[:n]))
			tail = s[strings.LastIndexByte(s, '\n')+1:]
		}
		if tail != "" {
			tail = ": " + oneLine(tail, 300)
		}
		return rec, sum, fmt.Errorf("%s exited with %v%s", r.agent, waitErr, tail)
	}
	if sum.Error != "" {
		return rec, sum, fmt.Errorf("%s reported an error: %s", r.agent, sum.Error)
	}
	return rec, sum, nil
}

// supervise waits for the agent to exit, stopping its group when ctx ends:
// SIGINT now, SIGKILL after Grace, or at once on Options.Kill or (after the
// deadline started the stop) an interrupt.
func (r *runner) supervise(ctx context.Context, g *shell.Group, exited <-chan error) (err error, stopping bool) {
	done := ctx.Done()
	var graceOver <-chan time.Time
	var interrupt <-chan struct{}
	for {
		select {
		case err := <-exited:
			return err, stopping
		case <-done:
			done, stopping = nil, true
			why := "stopping the agent (Ctrl-C again to kill)"
			if r.parent.Err() == nil {
				why = "max duration reached: stopping the agent (Ctrl-C to kill)"
				if c := context.Cause(ctx); c != ctx.Err() { // a worker's lease was lost
					why = c.Error() + ": stopping the agent (Ctrl-C to kill)"
				}
				interrupt = r.parent.Done()
			}
			r.p.Printf("%s · %s", r.p.head(), why)
			r.p.Action(why, true)
			g.Signal(shell.Interrupt)
			graceOver = time.After(r.o.Grace)
		case <-graceOver:
			graceOver = nil
			r.log.Warn("the agent did not exit within the grace; killing its process group", "grace", r.o.Grace)
			g.Kill()
		case <-interrupt:
			interrupt = nil
			g.Kill()
		case <-r.o.Kill:
			g.Kill()
		}
	}
}

// readEvents copies the agent's stdout to the cycle's log and parses it line
// by line; lines longer than MaxLine are not parsed (one warning per cycle).
func (r *runner) readEvents(src io.Reader, log io.Writer, parse Parser, sum *Summary) {
	br := bufio.NewReaderSize(src, 64<<10)
	var line []byte
	skipped, warned, lastNL := 0, false, true // skipped: the bytes of a line over MaxLine
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			log.Write(chunk)
			lastNL = chunk[len(chunk)-1] == '\n'
		}
		if skipped == 0 && len(line)+len(chunk) <= MaxLine {
			line = append(line, chunk...)
		} else {
			skipped += len(line) + len(chunk)
			line = line[:0]
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		switch {
		case skipped > 0:
			if !warned {
				warned = true
				r.log.Warn("skipped an agent event longer than the line cap (kept in the cycle log)", "bytes", skipped, "cap", MaxLine)
			}
			skipped = 0
		case len(bytes.TrimSpace(line)) > 0:
			ev, perr := parse(line)
			if perr != nil {
				r.log.Debug("agent output is not an event", "line", oneLine(string(line[:min(len(line), 400)]), 200), "err", perr)
			} else {
				sum.Add(ev)
				r.p.Action(ev.Action, false)
			}
		}
		line = line[:0]
		if cap(line) > 1<<20 {
			line = nil // do not keep a large buffer for the next short lines
		}
		if err != nil {
			if !lastNL {
				log.Write([]byte{'\n'})
			}
			return
		}
	}
}

// tallyEvery is the least time between two counts for the live line.
const tallyEvery = 5 * time.Second

// ticker redraws the live line every second on a terminal and, while an
// agent runs, recounts the closed tasks at most every tallyEvery, one count
// at a time, never while the agent's last action was a bd call.
func (r *runner) ticker(ctx context.Context) func() {
	if !r.o.TTY {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var last time.Time
		var counting sync.Mutex
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				if action := r.p.Tick(); !r.agentRunning.Load() || now.Sub(last) < tallyEvery || strings.Contains(action, "bd ") {
					continue
				}
				if !counting.TryLock() {
					continue // the last count has not come back
				}
				last = now
				go func() {
					defer counting.Unlock()
					cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					if tl, err := r.o.Beads.Tally(cctx, r.epic); err == nil {
						r.p.Tally(tl.Closed, tl.Total)
					}
				}()
			}
		}
	}()
	return func() { close(done) }
}
