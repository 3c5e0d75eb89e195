package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/engine"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/state"
)

// recoverHook ends a hook command that panicked as every hook must end:
// exit status 0 (Claude Code reads 2 as "block"), the agent let go with a
// systemMessage (encode renders it in the agent's protocol), the panic and
// its stack on stderr, where the agent's hook log keeps it. It must be
// deferred directly.
func recoverHook(name string, out, errw io.Writer, encode func(msg string) []byte) {
	r := recover()
	if r == nil {
		return
	}
	fmt.Fprintf(errw, "runtasks %s: panic: %v\n%s", name, r, debug.Stack())
	msg := fmt.Sprintf("runtasks %s crashed (panic: %v); allowed. Please report it with the hook's stderr.", name, r)
	if b := encode(msg); b != nil {
		out.Write(b)
	}
}

// recordConfigError writes a configuration error to the decision log of
// the project that holds dir (the default state directory: a broken file
// cannot name another).
func recordConfigError(f *Factory, dir string, in engine.Input, dec engine.Decision) {
	root, _, err := config.FindProject(config.LoadOptions{StartDir: dir, Environ: f.Environ(), MainWorktree: mainWorktree})
	if err != nil {
		if root, err = f.Getwd(); err != nil {
			return
		}
		if dir != "" {
			root = dir
		}
	}
	store := &state.Store{Dir: filepath.Join(root, config.DefaultStateDir)}
	if err := engine.RecordConfigError(store, in, dec, f.Now()); err != nil {
		fmt.Fprintf(f.Err, "runtasks: decision log: %v\n", err)
	}
}

// hookConfigError tells the person, from any hook, that runtasks is off
// until the configuration is fixed (stderr keeps it for the hook's log).
func hookConfigError(name string, out, errw io.Writer, agent string, err error) {
	dec := engine.ConfigErrorDecision(err)
	fmt.Fprintf(errw, "runtasks %s: %s\n", name, dec.SystemMessage)
	if b := hook.EncodeMessage(agent, dec.SystemMessage); b != nil {
		out.Write(b)
	}
}

// hookAgent is the agent a hook answers: the flag, else detected from the
// input, else Claude Code's protocol.
func hookAgent(flag string, p hook.Payload) string {
	if flag != "" {
		return agentOr(flag)
	}
	return agentOr(hook.Detect(p))
}
