package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestIntegrationGoInstall runs the txtar scenarios in testdata/goinstall:
// runtasks installed, and upgraded, with `go install` alone. Each script
// starts with a copy of the source cmd/runtasks is built from in $WORK/src
// (a module of its own: go.mod, go.sum and each package's files), GOBIN
// at $WORK/gobin, and this environment's Go toolchain, build cache and
// module cache, with no network (GOPROXY=off). -trimpath keeps the build
// cache's entries valid from one $WORK to the next, so only what a script
// changes is compiled again. bd is the fake of TestScript.
func TestIntegrationGoInstall(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the Go toolchain is not on PATH: %v", err)
	}
	out, err := exec.Command(goTool, "env", "-json", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var goEnv map[string]string
	if err := json.Unmarshal(out, &goEnv); err != nil {
		t.Fatalf("go env: %v: %s", err, out)
	}
	root, files := moduleSource(t, goTool)
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/goinstall",
		UpdateScripts: *update,
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			for _, kv := range []string{
				"HOME=" + home, "RUNTASKS_BD=fakebd", "FAKEBD_DIR=" + filepath.Join(e.WorkDir, "bd"), "BD_DISABLE_METRICS=1",
				"GOBIN=" + filepath.Join(e.WorkDir, "gobin"), "GOCACHE=" + goEnv["GOCACHE"], "GOMODCACHE=" + goEnv["GOMODCACHE"],
				"GOFLAGS=-trimpath", "GOPROXY=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0",
			} {
				k, v, _ := strings.Cut(kv, "=")
				e.Setenv(k, v)
			}
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			for _, rel := range files {
				data, err := os.ReadFile(filepath.Join(root, rel))
				if err != nil {
					return err
				}
				dst := filepath.Join(e.WorkDir, "src", rel)
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(dst, data, 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

// moduleSource is this module's root and the files, relative to it, that
// building cmd/runtasks reads: go.mod, go.sum, and the Go, assembly and
// embedded files of each of the module's packages cmd/runtasks imports.
func moduleSource(t *testing.T, goTool string) (root string, files []string) {
	t.Helper()
	out, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root = strings.TrimSpace(string(out))
	out, err = exec.Command(goTool, "list", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .SFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	files = []string{"go.mod", "go.sum"}
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		rel, err := filepath.Rel(root, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("%s is not under the module root %s", p, root)
		}
		files = append(files, rel)
	}
	return root, files
}
