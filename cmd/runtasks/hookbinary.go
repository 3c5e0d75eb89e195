//go:build !runtasks_hook

package main

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
)

// hookBinaryName is the hook-only build of runtasks (`go build -tags
// runtasks_hook`; make build and make install put it beside runtasks). It
// answers the hook commands exactly as runtasks does and starts faster:
// it leaves out the packages only people's commands use.
const hookBinaryName = "runtasks-hook"

// hookBinary is the program the agents' hooks run for the runtasks at exe:
// runtasks-hook beside it when that is an executable file of the same
// build (Go version, module version and VCS revision, from both binaries'
// build information), else exe itself. note says why a runtasks-hook
// there was passed over ("" when there is none).
func hookBinary(exe string) (bin, note string) {
	sibling := filepath.Join(filepath.Dir(exe), hookBinaryName)
	fi, err := os.Stat(sibling)
	if err != nil {
		return exe, ""
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return exe, sibling + " is not an executable file; the hooks run " + exe
	}
	a, aerr := buildinfo.ReadFile(exe)
	b, berr := buildinfo.ReadFile(sibling)
	if aerr != nil || berr != nil || buildKey(a) != buildKey(b) {
		return exe, sibling + " is not the same build as " + exe + " (build both again: make install); the hooks run " + exe
	}
	return sibling, ""
}
