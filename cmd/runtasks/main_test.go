package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

var update = flag.Bool("update", false, "rewrite golden files and script expectations")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"runtasks": func() { os.Exit(Main(os.Args[1:], newSystemFactory())) },
		// bd here is a fake serving fixtures (beads/beadstest); the real bd
		// runs in the integration tests.
		"fakebd": func() { os.Exit(beadstest.Main()) },
		// fakeagent plays `claude -p … --output-format stream-json` for
		// runtasks run (fakeagent_test.go), with the real bd.
		"fakeagent": func() { os.Exit(fakeAgentMain()) },
		// bdwrap runs the real bd with a delay, a filter or a count (bdwrap_test.go).
		"bdwrap": func() { os.Exit(bdwrapMain()) },
	})
}

// TestScript runs the txtar scenarios in testdata/script: the CLI as a
// user types it, with a fake bd serving captured JSON.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			e.Setenv("HOME", home)
			e.Setenv("RUNTASKS_BD", "fakebd")
			e.Setenv("FAKEBD_DIR", filepath.Join(e.WorkDir, "bd"))
			// The fake's store: the hooks drive only a project with a beads
			// store (a script without one unsets it).
			e.Setenv("BEADS_DIR", filepath.Join(e.WorkDir, "bd"))
			e.Setenv("BD_DISABLE_METRICS", "1")
			return os.MkdirAll(home, 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitlines": waitLines,
		},
	})
}

// waitLines is the script command `waitlines FILE N`: it waits (up to 20s)
// until FILE has at least N lines; what a detached process writes.
func waitLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitlines FILE N")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("waitlines: %v", err)
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if got := strings.Count(string(data), "\n"); got >= n {
			return
		} else if time.Now().After(deadline) {
			ts.Fatalf("waitlines: %s has %d line(s) after 20s, want %d:\n%s", args[0], got, n, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
