package main

import (
	"testing"
)

// trustProject trusts the project at dir as its person would (runtasks
// trust), in the configuration directory env names.
func trustProject(t *testing.T, dir string, env []string) {
	t.Helper()
	if code, out, errOut := runIn(t, dir, env, "", "trust"); code != 0 {
		t.Fatalf("runtasks trust: exit %d\n%s%s", code, out, errOut)
	}
}
