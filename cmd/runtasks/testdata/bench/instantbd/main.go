// Command instantbd is the benchmarks' instant bd (make bench,
// docs/benchmarks.md): it answers at once, without a database. `ready`
// lists two ready tasks of the epic bd-e; `list` lists the epic and those
// tasks (closed ones too with --all); anything else gets []. With
// INSTANTBD_LOG set it appends one line per call: the Unix time in
// nanoseconds at its start, then its arguments.
package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

const (
	epic  = `{"id":"bd-e","title":"Epic","status":"open","priority":1,"issue_type":"epic"}`
	task1 = `{"id":"bd-e.1","title":"First","status":"open","priority":1,"issue_type":"task","parent":"bd-e"}`
	task2 = `{"id":"bd-e.2","title":"Second","status":"open","priority":2,"issue_type":"task","parent":"bd-e"}`
	done  = `{"id":"bd-e.3","title":"Third","status":"closed","priority":2,"issue_type":"task","parent":"bd-e"}`
)

func main() {
	start := time.Now()
	args := os.Args[1:]
	if path := os.Getenv("INSTANTBD_LOG"); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintf(f, "%d %s\n", start.UnixNano(), strings.Join(args, " "))
			f.Close()
		}
	}
	out := "[]"
	switch {
	case len(args) > 0 && args[0] == "ready":
		out = "[" + task1 + "," + task2 + "]"
	case len(args) > 0 && args[0] == "list" && slices.Contains(args, "--all"):
		out = "[" + epic + "," + task1 + "," + task2 + "," + done + "]"
	case len(args) > 0 && args[0] == "list":
		out = "[" + epic + "," + task1 + "," + task2 + "]"
	}
	os.Stdout.WriteString(out + "\n")
}
