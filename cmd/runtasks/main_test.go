package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runtasks/runtasks/beads/beadstest"
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
			e.Setenv("BD_DISABLE_METRICS", "1")
			return os.MkdirAll(home, 0o755)
		},
	})
}
