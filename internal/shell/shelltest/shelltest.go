// Package shelltest helps tests check that runtasks leaves no process of
// the programs it started (Linux /proc).
package shelltest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Members lists the pids of the live (not zombie) processes of process
// group pgid, from /proc.
func Members(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range stats {
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens. A
		// process gone meanwhile reads as nothing.
		b, _ := os.ReadFile(p)
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out = append(out, pid)
		}
	}
	return out
}

// GroupGone fails t when a process of group pgid is alive after a second,
// and kills the survivors.
func GroupGone(t testing.TB, pgid int) {
	t.Helper()
	if pgid <= 0 {
		t.Fatalf("bad process group %d", pgid)
	}
	var left []int
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left = Members(pgid); len(left) == 0 {
			return
		}
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	t.Errorf("process group %d survived: pids %v", pgid, left)
}

// ReadPID waits up to five seconds for a pid written to path.
func ReadPID(t testing.TB, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n > 0 {
			return n
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}
