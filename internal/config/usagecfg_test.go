package config

import (
	"strings"
	"testing"
)

// A notify command may run runtasks: the variables it gets are not read
// as configuration (an unknown RUNTASKS_ variable is a warning).
func TestNotifyVariablesAreNotConfiguration(t *testing.T) {
	dir := cfgProject(t, "")
	env := []string{"RUNTASKS_EPIC=bd-e"}
	for _, name := range NotifyEnvNames {
		env = append(env, name+"=x")
	}
	var warned []string
	warn := func(m string) { warned = append(warned, m) }
	cfg, _, err := Load(LoadOptions{StartDir: dir, Environ: env, Warn: warn})
	if err != nil {
		t.Fatalf("Load with the notify variables: %v", err)
	}
	if cfg.Workflow.Epic != "bd-e" {
		t.Errorf("RUNTASKS_EPIC is still the epic: %q", cfg.Workflow.Epic)
	}
	if len(warned) != 0 {
		t.Errorf("the notify variables were warned about: %q", warned)
	}
	// Any other unknown RUNTASKS_ variable is still noticed (a warning).
	if _, _, err := Load(LoadOptions{StartDir: dir, Environ: []string{"RUNTASKS_EVENTS=x"}, Warn: warn}); err != nil || len(warned) != 1 {
		t.Errorf("an unknown RUNTASKS_ variable: err %v, warnings %q", err, warned)
	}
}

func TestNotifyConfigErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"workflow:\n  notify:\n    - {run: x, events: [done]}\n", `workflow.notify[0].events[0]: must be one of complete, needs_person, cap_reached, no_progress, beads_error, budget, self_disarm, reopened, got "done"`},
		{"workflow:\n  notify:\n    - {events: [complete]}\n", "workflow.notify[0].run: must not be empty"},
		{"workflow:\n  notify:\n    - {run: x, events: [complete], command: y}\n", "workflow.notify[0].command: unknown key"},
		{"workflow:\n  notify:\n    - {run: x, events: [complete], timeout: 2h}\n", "workflow.notify[0].timeout: must be at most 1h, got 2h"},
		{"usage:\n  prices:\n    - {model: \"[\", input: 1}\n", `usage.prices[0].model: expected a glob such as claude-sonnet-4*, got "["`},
		{"usage:\n  prices:\n    - {model: m, input: -1}\n", "usage.prices[0].input: must be 0 or more, got -1"},
		{"usage:\n  prices:\n    - {model: m, inputs: 1}\n", "usage.prices[0].inputs: unknown key"},
		{"workflow:\n  budget:\n    session_cost: -1\n", "workflow.budget.session_cost: must be 0 or more"},
	} {
		dir := cfgProject(t, tc.yaml)
		_, _, err := Load(LoadOptions{StartDir: dir})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
