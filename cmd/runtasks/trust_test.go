package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/trust"
)

// trustProject trusts the project at dir as its person would (runtasks
// trust), in the configuration directory env names.
func trustProject(t *testing.T, dir string, env []string) {
	t.Helper()
	if code, out, errOut := runIn(t, dir, env, "", "trust", "--yes"); code != 0 {
		t.Fatalf("runtasks trust: exit %d\n%s%s", code, out, errOut)
	}
}

// TestTrustAsks: runtasks trust shows what the project.yaml would run,
// then takes a yes only from a person: asked on a terminal, --yes
// otherwise. A no, or no one to ask, trusts nothing (exit 4).
func TestTrustAsks(t *testing.T) {
	dir := configProject(t, "beads:\n  bin: ./evilbd\nworkflow:\n  checks:\n    - {type: command, run: touch PWNED}\n")
	env := []string{"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()}
	trusted := func() bool {
		st, _ := (&Factory{Environ: func() []string { return env }}).trustStore()
		data, _ := os.ReadFile(filepath.Join(dir, "project.yaml"))
		s, _ := st.Check(dir, data)
		return s == trust.Trusted
	}
	for _, tc := range []struct {
		name        string
		interactive bool
		stdin       string
		args        []string
		code        int
		out         string
	}{
		{"nobody to ask", false, "", nil, 4, "run again with --yes"},
		{"the answer is no", true, "n\n", nil, 4, "the answer was no"},
		{"the answer is yes", true, "y\n", nil, 0, "trusted " + dir},
	} {
		f, out, errb := configFactory(dir, env...)
		f.In = strings.NewReader(tc.stdin)
		f.Interactive = func() bool { return tc.interactive }
		code := execute(context.Background(), append([]string{"trust"}, tc.args...), f)
		all := out.String() + errb.String()
		if code != tc.code || !strings.Contains(all, tc.out) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", tc.name, code, tc.code, tc.out, all)
		}
		for _, want := range []string{"would make runtasks run:", "beads.bin", "./evilbd", "workflow.checks[0].run", "touch PWNED"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: the review lacks %q:\n%s", tc.name, want, out)
			}
		}
		if got := trusted(); got != (tc.code == 0) {
			t.Errorf("%s: trusted = %v", tc.name, got)
		}
	}
}
