package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
}

// TestHookBinary: install writes runtasks-hook beside runtasks only when
// it is an executable of the same build.
func TestHookBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	other, err := exec.LookPath("bd") // a Go program of another build
	if err != nil {
		t.Skip("no bd on PATH")
	}
	cases := []struct {
		name     string
		sibling  func(path string)
		wantHook bool
		note     string
	}{
		{"none", func(string) {}, false, ""},
		{"same build", func(p string) { copyExecutable(t, self, p) }, true, ""},
		{"another build", func(p string) { copyExecutable(t, other, p) }, false, "not the same build"},
		{"not a Go program", func(p string) { os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755) }, false, "not the same build"},
		{"not executable", func(p string) { copyExecutable(t, self, p); os.Chmod(p, 0o644) }, false, "not an executable file"},
		{"a directory", func(p string) { os.Mkdir(p, 0o755) }, false, "not an executable file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "runtasks")
			copyExecutable(t, self, exe)
			c.sibling(filepath.Join(dir, hookBinaryName))
			bin, note := hookBinary(exe)
			want := exe
			if c.wantHook {
				want = filepath.Join(dir, hookBinaryName)
			}
			if bin != want {
				t.Errorf("hookBinary = %s, want %s (note %q)", bin, want, note)
			}
			if c.note == "" && note != "" || !strings.Contains(note, c.note) {
				t.Errorf("note %q, want one containing %q", note, c.note)
			}
		})
	}
}

// TestHookBuildLinks: the hook-only build links none of the packages a
// stop does not need and whose start-up every stop would pay
// (docs/benchmarks.md): net/http, which the easyjson package itself
// imports (scripts/easyjson.sh keeps the generated codecs off it), the jq
// engine, YAML, the terminal screens.
func TestHookBuildLinks(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "runtasks_hook", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	for _, pkg := range []string{"net/http", "github.com/mailru/easyjson", "github.com/itchyny/gojq", "charm.land/bubbletea/v2"} {
		if slices.Contains(deps, pkg) {
			t.Errorf("the hook-only build links %s", pkg)
		}
	}
	if !slices.Contains(deps, "github.com/mailru/easyjson/jlexer") {
		t.Errorf("the hook-only build does not link the generated codecs' jlexer: is this test still looking at the right build?")
	}
}
