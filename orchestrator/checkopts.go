package orchestrator

// checkOptionProblems checks a checker's options in workflow.checks.
// The checkers' owner (checks.go) replaces this with per-type validation.
func checkOptionProblems(typ string, spec map[string]any) []cfgProblem {
	return nil
}
