package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/hook"
	"github.com/runtasks/runtasks/internal/install"
	"github.com/runtasks/runtasks/internal/shell"
)

// Hook timeouts. The agent kills a hook that outlives its timeout; a stop
// hook killed in the middle of a command check leaks the check's processes
// (without runtasks' own signal handling) and, worse, decides nothing.
const (
	// hookBaseTimeout covers the stop hook without command checks: bd's
	// queries (a few, each bounded by beads.timeout) and the state.
	hookBaseTimeout = 30 * time.Second
)

// hookTimeoutFor is the Stop hook timeout that covers the configured
// checks: the command checks run one after the other (all_must_pass stops
// at the first failure, but every one may pass, and an "any" composite may
// run them all), each up to its timeout and the runner's grace, on top of
// hookBaseTimeout for bd and the state. install writes it (rounded up to
// whole seconds); doctor compares the installed timeouts with it.
func hookTimeoutFor(cfg *config.Config) time.Duration {
	var sum time.Duration
	var walk func(specs []config.CheckSpec)
	walk = func(specs []config.CheckSpec) {
		for _, sp := range specs {
			switch sp.Type {
			case "command":
				d := sp.Timeout
				if d <= 0 {
					d = config.DefaultCheckTimeout
				}
				sum += d + shell.DefaultGrace
			case "composite":
				walk(sp.Checks)
			}
		}
	}
	if cfg != nil {
		walk(cfg.Workflow.Checks)
	}
	return (hookBaseTimeout + sum).Round(time.Second)
}

// stopHookTimeouts reads the timeouts of runtasks' stop-hook entries in an
// agent's settings file (Claude Code and Codex: seconds; Gemini CLI:
// milliseconds; Cursor has none). Entries without one are reported as 0.
func stopHookTimeouts(agent string, data []byte) []time.Duration {
	unit := time.Second
	switch agent {
	case hook.Gemini:
		unit = time.Millisecond
	case hook.Cursor:
		return nil
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []time.Duration
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if strings.Contains(h.Command, "runtasks") && strings.Contains(h.Command, " stop-hook") {
					out = append(out, time.Duration(h.Timeout*float64(unit)))
				}
			}
		}
	}
	return out
}

// doctorHookTimeout checks that every installed stop hook's timeout covers
// the configured checks (hookTimeoutFor).
func doctorHookTimeout(o *doctorOptions, cfg *config.Config) doctorCheck {
	need := hookTimeoutFor(cfg)
	var short []string
	n := 0
	for _, agent := range hook.Agents {
		for _, global := range []bool{false, true} {
			path, err := install.SettingsPath(install.Options{Agent: agent, Global: global, ProjectDir: o.Root, Home: o.Home, CodexHome: o.CodexHome})
			if err != nil {
				continue
			}
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			for _, d := range stopHookTimeouts(agent, data) {
				n++
				if d > 0 && d < need {
					short = append(short, fmt.Sprintf("%s (%s)", path, d))
				}
			}
		}
	}
	switch {
	case n == 0:
		return doctorCheck{levelOK, "timeout", "no stop hook installed", ""}
	case len(short) > 0:
		return doctorCheck{levelWarning, "timeout",
			fmt.Sprintf("stop hook timeout below the %s the checks need: %s; the agent kills the hook mid-check and the stop is decided by nobody", need, strings.Join(short, ", ")),
			fmt.Sprintf(`set "timeout" of the runtasks stop-hook entry to %d (seconds; Gemini CLI: %d ms), or lower the command checks' timeout`, int(need/time.Second), need.Milliseconds())}
	default:
		return doctorCheck{levelOK, "timeout", fmt.Sprintf("every stop hook's timeout covers the checks (%s)", need), ""}
	}
}
