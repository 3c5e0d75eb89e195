package beads

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// memoryFiles is false in tests of the pipes on Linux.
var memoryFiles = true

// output collects what bd writes on stdout and stderr. Where the system
// has memory files (memoryFile) bd writes into two of them and they are
// read once it has exited: no pipes, no goroutines copying them while it
// runs, and nothing a process bd left behind could hold open. Elsewhere,
// pipes copied into buffers.
type output struct {
	files          [2]*os.File
	stdout, stderr bytes.Buffer
}

// attach sets cmd's stdout and stderr, and reports whether they are
// memory files.
func (o *output) attach(cmd *exec.Cmd) bool {
	var out, errOut *os.File
	if memoryFiles {
		out, errOut = memoryFile("bd-stdout"), memoryFile("bd-stderr")
	}
	if out == nil || errOut == nil {
		closeFiles(out, errOut)
		cmd.Stdout, cmd.Stderr = &o.stdout, &o.stderr
		return false
	}
	o.files = [2]*os.File{out, errOut}
	cmd.Stdout, cmd.Stderr = out, errOut
	return true
}

// collect reads the memory files, after bd exited, into the buffers and
// closes them.
func (o *output) collect() error {
	if o.files[0] == nil {
		return nil
	}
	defer closeFiles(o.files[:]...)
	for i, buf := range []*bytes.Buffer{&o.stdout, &o.stderr} {
		if _, err := io.Copy(buf, io.NewSectionReader(o.files[i], 0, 1<<62)); err != nil {
			return fmt.Errorf("read bd's output: %w", err)
		}
	}
	return nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
