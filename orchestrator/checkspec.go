package orchestrator

import (
	"fmt"
	"slices"
	"strings"
)

// CheckTypes names the built-in completion checkers.
var CheckTypes = []string{"beads", "promise", "done_token", "command", "files", "plan", "results", "composite"}

// CheckSpecProblems checks one workflow.checks item: a checker name, or an
// object whose "type" names one. The checker's own options are checked by
// checkOptionProblems.
func CheckSpecProblems(item any) []cfgProblem {
	switch v := item.(type) {
	case string:
		if !slices.Contains(CheckTypes, v) {
			return cfgOne("unknown checker %q (want one of %s)", v, strings.Join(CheckTypes, ", "))
		}
		return nil
	case map[string]any:
		typ, ok := v["type"].(string)
		if !ok {
			return []cfgProblem{{".type", "missing: a check object needs its type (" + strings.Join(CheckTypes, ", ") + ")"}}
		}
		if !slices.Contains(CheckTypes, typ) {
			return []cfgProblem{{".type", fmt.Sprintf("unknown checker %q (want one of %s)", typ, strings.Join(CheckTypes, ", "))}}
		}
		return checkOptionProblems(typ, v)
	}
	return cfgOne("expected a checker name or {type, …}, got %s", cfgDescribe(item))
}
