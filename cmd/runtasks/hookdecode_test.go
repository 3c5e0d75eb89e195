package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/runtasks/runtasks/internal/config"
)

// builtPair builds runtasks and the hook-only runtasks-hook side by side
// into one directory, as make install puts them (once per test binary).
func builtPair(t *testing.T) (runtasks, hook string) {
	t.Helper()
	pairOnce.Do(func() {
		dir, err := os.MkdirTemp("", "runtasks-pair-")
		if err != nil {
			pairErr = err
			return
		}
		pairDir = dir
		for _, b := range []struct{ out, tags string }{{"runtasks", ""}, {hookBinaryName, "runtasks_hook"}} {
			cmd := exec.Command("go", "build", "-tags", b.tags, "-o", filepath.Join(dir, b.out), ".")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				pairErr = &exec.Error{Name: "go build " + b.out, Err: err}
				t.Logf("%s", out)
				return
			}
		}
	})
	if pairErr != nil {
		t.Fatal(pairErr)
	}
	// Each test gets its own copies: it may take runtasks away.
	dir := t.TempDir()
	for _, name := range []string{"runtasks", hookBinaryName} {
		copyExecutable(t, filepath.Join(pairDir, name), filepath.Join(dir, name))
	}
	return filepath.Join(dir, "runtasks"), filepath.Join(dir, hookBinaryName)
}

var (
	pairOnce sync.Once
	pairDir  string
	pairErr  error
)

// TestHookBuildDecodesThroughRuntasks: runtasks-hook links no YAML parser.
// At its first stop in a project it has runtasks, beside it, decode the
// trusted project.yaml (runtasks config decode) and keeps the answer in
// its configuration cache: the next stops read it there, with runtasks
// gone. A file with a problem is refused as runtasks refuses it, and a
// runtasks that cannot decode (missing) is a configuration error the
// person sees, never the defaults in silence.
func TestHookBuildDecodesThroughRuntasks(t *testing.T) {
	if out, err := exec.Command("go", "list", "-deps", "-tags", "runtasks_hook", ".").Output(); err != nil {
		t.Fatal(err)
	} else if bytes.Contains(out, []byte("yaml")) {
		t.Errorf("the hook-only build links a YAML package:\n%s", out)
	}
	full, hook := builtPair(t)
	cache := t.TempDir()
	env := faultEnv(t, readyBD(t), "XDG_CACHE_HOME="+cache)
	stop := func(root, session string) stopAnswer {
		t.Helper()
		cmd := exec.Command(hook, "stop-hook", "--epic", faultEpic)
		cmd.Dir, cmd.Env = root, env
		cmd.Stdin = strings.NewReader(stopInput(t, map[string]any{"session_id": session, "cwd": root,
			"hook_event_name": "Stop", "last_assistant_message": "Progress made."}))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("runtasks-hook stop-hook: %v\n%s", err, stderr.String())
		}
		var a stopAnswer
		if len(bytes.TrimSpace(out)) > 0 {
			if err := json.Unmarshal(out, &a); err != nil {
				t.Fatalf("stdout is not one JSON object: %q", out)
			}
		}
		return a
	}
	trust := func(root string) {
		t.Helper()
		cmd := exec.Command(full, "trust")
		cmd.Dir, cmd.Env = root, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("runtasks trust: %v\n%s", err, out)
		}
	}

	// max_cycles 1 from the file: the first stop blocks, the second is the
	// cap (the default, 50, would block again).
	root := faultProject(t, "workflow:\n  stop_hook:\n    max_cycles: 1\n")
	trust(root)
	if a := stop(root, "s1"); a.Decision != "block" {
		t.Fatalf("first stop: %+v, want a block", a)
	}
	entries, _ := os.ReadDir(filepath.Join(cache, "runtasks", "config"))
	if len(entries) != 1 {
		t.Fatalf("configuration cache: %v, want the hook's entry", entries)
	}
	if err := os.Rename(full, full+".away"); err != nil {
		t.Fatal(err)
	}
	if a := stop(root, "s1"); a.Decision == "block" || !strings.Contains(a.SystemMessage, "1/1") {
		t.Errorf("second stop, from the cache: %+v, want the cap of the file's max_cycles 1", a)
	}

	// Without runtasks to decode a file the cache has no entry for.
	other := faultProject(t, "workflow:\n  stop_hook:\n    max_cycles: 2\n")
	os.Rename(full+".away", full)
	trust(other)
	os.Rename(full, full+".away")
	if a := stop(other, "s2"); a.Decision == "block" || !strings.Contains(a.SystemMessage, "runtasks beside it") {
		t.Errorf("no runtasks beside the hook: %+v, want a visible configuration error", a)
	}
	os.Rename(full+".away", full)

	// A problem: the same words as runtasks' own.
	bad := faultProject(t, "workflow:\n  stop_hook:\n    max_cycles: many\n")
	trust(bad)
	validate := exec.Command(full, "config", "validate")
	validate.Dir, validate.Env = bad, env
	want, _ := validate.CombinedOutput()
	line := strings.TrimSpace(string(want))
	if !strings.Contains(line, "max_cycles") {
		t.Fatalf("runtasks config validate: %q", want)
	}
	if a := stop(bad, "s3"); a.Decision == "block" || !strings.Contains(a.SystemMessage, line) {
		t.Errorf("a file with a problem: %+v, want runtasks' words %q", a, line)
	}
}

// TestConfigDecode: runtasks config decode answers only the hook-only
// build of its own build; the entry it prints is config's.
func TestConfigDecode(t *testing.T) {
	in := "workflow:\n  stop_hook:\n    max_cycles: 7\n"
	var out bytes.Buffer
	err := runConfigDecode(&configDecodeOptions{In: strings.NewReader(in), Out: &out, Source: "p.yaml", BuildKey: "b1", Own: "b1"})
	want, _ := config.DecodeFileEntry("p.yaml", []byte(in))
	if err != nil || strings.TrimSpace(out.String()) != string(want) {
		t.Errorf("decode: %v, %q; want %q", err, out.String(), want)
	}
	for _, c := range []struct{ asking, own string }{{"b0", "b1"}, {"", ""}} {
		err := runConfigDecode(&configDecodeOptions{In: strings.NewReader(in), Out: &out, Source: "p.yaml", BuildKey: c.asking, Own: c.own})
		if err == nil || !strings.Contains(err.Error(), "not the same build") {
			t.Errorf("asked by build %q from build %q: %v, want a refusal", c.asking, c.own, err)
		}
	}
}
