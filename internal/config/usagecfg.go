package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/runtasks/runtasks/internal/usage"
)

// UsageConfig configures token accounting (the usage section).
type UsageConfig struct {
	// Prices per model, first match wins. A project's list replaces the
	// shipped one.
	Prices []usage.Price `koanf:"prices"`
}

// NotifyEvents are the events a workflow.notify command can ask for.
var NotifyEvents = []string{"complete", "needs_person", "cap_reached", "no_progress", "beads_error", "budget"}

// NotifyEnvNames are the variables a notify command gets that are not
// configuration keys (notify.Event.Env): the environment layer ignores
// them, so that a notify command can run runtasks itself.
var NotifyEnvNames = []string{"RUNTASKS_EVENT", "RUNTASKS_OUTCOME", "RUNTASKS_SESSION", "RUNTASKS_AGENT",
	"RUNTASKS_CYCLE", "RUNTASKS_WHY", "RUNTASKS_MESSAGE", "RUNTASKS_SUMMARY", "RUNTASKS_PROJECT",
	"RUNTASKS_TOKENS", "RUNTASKS_COST"}

// NotifyTimeout is a notify command's time limit when none is given.
const NotifyTimeout = 30 * time.Second

func cfgPricesRule(prices []usage.Price) (probs cfgProblems) {
	for i, p := range prices {
		at := fmt.Sprintf("[%d]", i)
		if strings.TrimSpace(p.Model) == "" {
			probs = append(probs, cfgProblem{at + ".model", "missing: the model (a glob such as claude-sonnet-4*)"})
		} else if _, err := path.Match(p.Model, ""); err != nil {
			probs = append(probs, cfgProblem{at + ".model", "invalid pattern: " + err.Error()})
		}
		for _, n := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if n.v < 0 || n.v > 1e6 {
				probs = append(probs, cfgProblem{at + "." + n.name, fmt.Sprintf("must be 0 to 1e+06 dollars per million tokens, got %g", n.v)})
			}
		}
	}
	return probs
}

func cfgNotifyRule(notify []Notify) (probs cfgProblems) {
	for i, n := range notify {
		at := fmt.Sprintf("[%d]", i)
		if strings.TrimSpace(n.Run) == "" {
			probs = append(probs, cfgProblem{at + ".run", "missing: the command to run"})
		}
		if len(n.Events) == 0 {
			probs = append(probs, cfgProblem{at + ".events", "missing: the events that fire it (" + strings.Join(NotifyEvents, ", ") + ")"})
		}
		for j, e := range n.Events {
			if !slices.Contains(NotifyEvents, e) {
				probs = append(probs, cfgProblem{fmt.Sprintf("%s.events[%d]", at, j), fmt.Sprintf("unknown event %q (want one of %s)", e, strings.Join(NotifyEvents, ", "))})
			}
		}
		if n.Timeout < 0 || n.Timeout > time.Hour {
			probs = append(probs, cfgProblem{at + ".timeout", "must be 0s to 1h, got " + FormatDuration(n.Timeout)})
		}
	}
	return probs
}
