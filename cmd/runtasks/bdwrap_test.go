package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// bdwrapMain is bdwrap, the real bd (from PATH) behind a wrapper for the
// integration scripts and the benchmarks (beads.bin: bdwrap):
// BDWRAP_LOG appends each call's first argument to a file (bd calls
// counted); BDWRAP_HIDE removes an id from bd ready's answer (a task bd
// omits though its blockers are closed); BDWRAP_CLAIM_SLEEP sleeps after a
// bd update --claim that succeeded (an answer that comes late).
func bdwrapMain() int {
	args := os.Args[1:]
	if log := os.Getenv("BDWRAP_LOG"); log != "" && len(args) > 0 {
		if f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintln(f, args[0])
			f.Close()
		}
	}
	cmd := exec.Command("bd", args...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.Output()
	if hide := os.Getenv("BDWRAP_HIDE"); hide != "" && err == nil && len(args) > 0 && args[0] == "ready" {
		var list []map[string]any
		if json.Unmarshal(out, &list) == nil {
			list = slices.DeleteFunc(list, func(is map[string]any) bool { return is["id"] == hide })
			out, _ = json.Marshal(list)
		}
	}
	os.Stdout.Write(out)
	if d, e := time.ParseDuration(os.Getenv("BDWRAP_CLAIM_SLEEP")); e == nil && err == nil && slices.Contains(args, "--claim") && strings.Contains(strings.Join(args, " "), "update ") {
		time.Sleep(d)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bdwrap:", err)
		return 1
	}
	return 0
}
