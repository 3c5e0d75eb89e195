// Package beadstest provides a fake bd for fast script tests of edge cases
// (bd failing, hanging, printing garbage). Integration tests use the real bd.
//
// The fake answers from files in $FAKEBD_DIR. For "bd <sub> <arg> …" it looks
// for <sub>-<arg>.json, then <sub>.json, printed to stdout; <sub>.stderr to
// stderr; <sub>.rc holds the exit status; <sub>.sleep a duration to wait
// first (the same -<arg> refinement applies to each). A missing answer file
// is exit status 1 with "fakebd: no answer for …" on stderr. Every call is
// appended to $FAKEBD_DIR/calls.log, one line of arguments per call.
package beadstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Main runs the fake bd with os.Args and returns its exit status.
func Main() int {
	dir := os.Getenv("FAKEBD_DIR")
	if dir == "" {
		fmt.Fprintln(os.Stderr, "fakebd: FAKEBD_DIR is not set")
		return 2
	}
	args := os.Args[1:]
	if f, err := os.OpenFile(filepath.Join(dir, "calls.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintln(f, strings.Join(args, " "))
		f.Close()
	}
	var words []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	if len(words) == 0 {
		fmt.Fprintln(os.Stderr, "fakebd: no subcommand")
		return 2
	}
	names := []string{words[0]}
	if len(words) > 1 {
		names = []string{words[0] + "-" + words[1], words[0]}
	}
	read := func(ext string) ([]byte, bool) {
		for _, n := range names {
			if b, err := os.ReadFile(filepath.Join(dir, n+ext)); err == nil {
				return b, true
			}
		}
		return nil, false
	}
	if b, ok := read(".sleep"); ok {
		d, err := time.ParseDuration(strings.TrimSpace(string(b)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakebd: bad sleep: %v\n", err)
			return 2
		}
		time.Sleep(d)
	}
	out, hasOut := read(".json")
	errOut, hasErr := read(".stderr")
	rcText, hasRC := read(".rc")
	if !hasOut && !hasErr && !hasRC {
		fmt.Fprintf(os.Stderr, "fakebd: no answer for %q\n", strings.Join(args, " "))
		return 1
	}
	os.Stdout.Write(out)
	os.Stderr.Write(errOut)
	if hasRC {
		rc, err := strconv.Atoi(strings.TrimSpace(string(rcText)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakebd: bad rc: %v\n", err)
			return 2
		}
		return rc
	}
	return 0
}
