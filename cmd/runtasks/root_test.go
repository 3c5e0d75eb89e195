package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestHookTreeSameAsFull: Main builds only the hook command a hook runs
// (commandsFor); its help, flag and argument errors must be those of the
// whole tree.
func TestHookTreeSameAsFull(t *testing.T) {
	run := func(only string, args []string) (string, string, string) {
		var out, errOut bytes.Buffer
		f := &Factory{In: strings.NewReader(""), Out: &out, Err: &errOut, Environ: func() []string { return nil },
			Getwd: func() (string, error) { return t.TempDir(), nil }, Now: time.Now,
			Executable: func() (string, error) { return "runtasks", nil }}
		root := newRootCmdOnly(f, only)
		root.SetArgs(args)
		err := root.Execute()
		msg := "<nil>"
		if err != nil {
			msg = err.Error()
			if ee, ok := err.(*ExitError); ok {
				msg = strings.Repeat("!", ee.Code) + msg
			}
		}
		return out.String(), errOut.String(), msg
	}
	for _, args := range [][]string{
		{"stop-hook", "--help"}, {"stop-hook", "-h"}, {"stop-hook", "extra"}, {"stop-hook", "--no-such-flag"},
		{"stop-hook", "--max-cycles", "x"}, {"stop-hook", "help"}, {"stop-hook", "--help", "--log-level", "debug"},
		{"prompt-hook", "--help"}, {"prompt-hook", "extra"}, {"session-hook", "--help"}, {"session-hook", "--bogus"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			only := commandsFor(args)
			if only != args[0] {
				t.Fatalf("commandsFor(%q) = %q, want %q", args, only, args[0])
			}
			fo, fe, ferr := run("", args)
			ho, he, herr := run(only, args)
			if fo != ho || fe != he || ferr != herr {
				t.Errorf("hook-only tree differs from the whole tree:\nwhole: %q %q %q\nhook:  %q %q %q", fo, fe, ferr, ho, he, herr)
			}
			if fo == "" && ferr == "<nil>" {
				t.Errorf("no output and no error: the case tests nothing")
			}
		})
	}
	for _, args := range [][]string{nil, {}, {"--help"}, {"status"}, {"help", "stop-hook"}, {"__complete", "stop-hook", ""}, {"--config", "x", "stop-hook"}} {
		if only := commandsFor(args); only != "" {
			t.Errorf("commandsFor(%q) = %q, want the whole tree", args, only)
		}
	}
}
