// Package beadstest provides a fake bd for script tests of edge cases, and
// real bd stores and Dolt servers for integration tests.
//
// The fake answers "bd <sub> <arg> …" from $FAKEBD_DIR: <sub>-<arg>.json,
// else <sub>.json, on stdout; .stderr, .rc (exit status) and .sleep (a
// wait first) likewise. No answer file (or no subcommand) is status 1.
// Each call's arguments are appended to calls.log.
package beadstest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	words := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "-") })
	var names []string // <sub>-<arg>, then <sub>
	for n := min(len(words), 2); n > 0; n-- {
		names = append(names, strings.Join(words[:n], "-"))
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
