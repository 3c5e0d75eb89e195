package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is this build's description: runtasks, the module version ("(devel)"
// for a build from a checkout), and the VCS revision, time and state the Go
// toolchain stamped into it (go build in a git checkout; go install of a
// tagged module has the version instead).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "runtasks (no build information) " + runtime.Version()
	}
	s := "runtasks " + bi.Main.Version
	vcs := map[string]string{}
	for _, kv := range bi.Settings {
		vcs[kv.Key] = kv.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		s += " (revision " + rev
		if vcs["vcs.modified"] == "true" {
			s += ", modified"
		}
		if at := vcs["vcs.time"]; at != "" {
			s += ", " + at
		}
		s += ")"
	}
	return s + " " + bi.GoVersion
}

type versionOptions struct{ *Factory }

func newVersionCmd(f *Factory) *cobra.Command {
	o := &versionOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print runtasks' version and VCS revision",
		Long: `version prints the module version of this runtasks ("(devel)" for a build
from a checkout), the VCS revision it was built from (with ", modified" when
the work tree had changes), and the Go version. runtasks --version prints
the same. runtasks doctor compares it with the runtasks the hooks run.`,
		Example: `  runtasks version
  runtasks --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runVersion(o) },
	}
	setExitStatus(cmd, `  0  printed`)
	return cmd
}

func runVersion(o *versionOptions) error {
	_, err := fmt.Fprintln(o.Out, version())
	return err
}
