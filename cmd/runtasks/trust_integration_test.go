package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/doctor"
)

func envValue(env []string, key string) string {
	return config.LookupEnv(env, key)
}

// Issue 14, case 1: a clone whose project.yaml runs programs (a command
// check, beads.bin), opened with a global install under a temp HOME. The
// hooks never run them until the person trusts the project; then they do;
// a change to the file after that needs trusting again.
func TestIntegrationUntrustedCloneNeverRuns(t *testing.T) {
	s := beadstest.NewStore(t, "demo")
	epic := s.Create("Ship the parser", "--type", "epic")
	s.Create("Write the parser", "--parent", epic, "--priority", "1")
	clone := s.Root
	home := envValue(s.Env, "HOME")

	// The user's global install (Claude Code's user settings).
	if code, out, errOut := runIn(t, home, s.Env, "", "install", "claude", "--global"); code != 0 {
		t.Fatalf("install --global: exit %d\n%s%s", code, out, errOut)
	}
	settings, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(settings), "stop-hook") {
		t.Fatalf("global settings: %v\n%s", err, settings)
	}

	// The clone's files: a check that touches PWNED, a bd wrapper that
	// touches BD-RAN, an epic so that every stop is driven.
	writeFile(t, filepath.Join(clone, "x.sh"), "#!/bin/sh\ntouch \"$(dirname \"$0\")/BD-RAN\"\nexec "+s.Bin+" \"$@\"\n")
	yaml := "workflow:\n  epic: " + epic + "\n  checks:\n    - {type: command, run: \"touch PWNED\"}\n    - beads\nbeads:\n  bin: ./x.sh\n"
	writeFile(t, filepath.Join(clone, "project.yaml"), yaml)
	pwned, bdRan := filepath.Join(clone, "PWNED"), filepath.Join(clone, "BD-RAN")
	// clear runs before each round of hooks (once trusted, they run).
	clear := func() { os.Remove(pwned); os.Remove(bdRan) }
	gone := func() bool {
		_, e1 := os.Stat(pwned)
		_, e2 := os.Stat(bdRan)
		return os.IsNotExist(e1) && os.IsNotExist(e2)
	}
	hook := func(sub string, payload map[string]any) map[string]any {
		t.Helper()
		payload["session_id"], payload["cwd"] = "s1", clone
		in, _ := json.Marshal(payload)
		code, out, errOut := runIn(t, home, s.Env, string(in), sub)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", sub, code, errOut)
		}
		var a map[string]any
		if strings.TrimSpace(out) != "" {
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatalf("%s: stdout is not one JSON object: %q", sub, out)
			}
		}
		return a
	}
	stop := map[string]any{"hook_event_name": "Stop", "last_assistant_message": "<promise>ALL TASKS COMPLETE</promise>"}
	trustCmd := "`runtasks trust " + clone + "`"

	a := hook("session-hook", map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	if msg, _ := a["systemMessage"].(string); !strings.Contains(msg, trustCmd) {
		t.Errorf("session-hook: systemMessage %q does not name %s", msg, trustCmd)
	}
	a = hook("prompt-hook", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/run-tasks " + epic})
	if msg, _ := a["systemMessage"].(string); !strings.Contains(msg, trustCmd) {
		t.Errorf("prompt-hook: systemMessage %q does not name %s", msg, trustCmd)
	}
	a = hook("stop-hook", maps(stop))
	if msg, _ := a["systemMessage"].(string); !strings.Contains(msg, trustCmd) || !strings.Contains(msg, "not trusted") {
		t.Errorf("stop-hook: systemMessage %q does not say the file is not trusted and name %s", msg, trustCmd)
	}
	if !gone() {
		t.Fatal("an untrusted project.yaml ran its programs")
	}
	// doctor, the first command a person runs in a new clone, runs nothing
	// of the file either, and says what it would have run.
	if code, out, _ := runIn(t, clone, s.Env, "", "doctor"); !strings.Contains(out, "is untrusted: the hooks and doctor ignore it") || !strings.Contains(out, "beads.bin: ./x.sh") {
		t.Errorf("doctor (exit %d) does not show the trust state and what the file runs:\n%s", code, out)
	}
	if !gone() {
		t.Fatal("doctor ran the untrusted project.yaml's programs")
	}

	// Trusted: the hooks read the file, and its programs run.
	clear()
	if code, out, errOut := runIn(t, clone, s.Env, "", "trust", "--yes"); code != 0 || !strings.Contains(out, "trusted "+clone) {
		t.Fatalf("trust: exit %d\n%s%s", code, out, errOut)
	}
	a = hook("stop-hook", maps(stop))
	if _, err := os.Stat(pwned); err != nil {
		t.Errorf("trusted: the command check did not run (%v); answer %v", err, a)
	}
	if _, err := os.Stat(bdRan); err != nil {
		t.Errorf("trusted: beads.bin did not run (%v)", err)
	}
	if code, out, _ := runIn(t, clone, s.Env, "", "doctor"); !strings.Contains(out, clone+" is trusted") {
		t.Errorf("doctor (exit %d) does not say trusted:\n%s", code, out)
	}

	// Changed since trusted: ignored again.
	clear()
	writeFile(t, filepath.Join(clone, "project.yaml"), yaml+"# one more line\n")
	a = hook("stop-hook", maps(stop))
	if msg, _ := a["systemMessage"].(string); !strings.Contains(msg, "changed since it was trusted") || !strings.Contains(msg, trustCmd) {
		t.Errorf("changed: systemMessage %q", msg)
	}
	if !gone() {
		t.Fatal("a project.yaml changed since it was trusted ran its programs")
	}
	if _, out, _ := runIn(t, clone, s.Env, "", "doctor"); !strings.Contains(out, "is changed since trusted") {
		t.Errorf("doctor does not say changed:\n%s", out)
	}

	// untrust: ignored again.
	runIn(t, clone, s.Env, "", "trust", "--yes")
	if code, out, _ := runIn(t, clone, s.Env, "", "untrust"); code != 0 || !strings.Contains(out, "untrusted "+clone) {
		t.Fatalf("untrust: exit %d %s", code, out)
	}
	clear()
	hook("stop-hook", maps(stop))
	if !gone() {
		t.Fatal("an untrusted project.yaml ran its programs after untrust")
	}
}

func maps(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A project install trusts a project.yaml it did not write only on the
// person's yes (--trust here: nobody can be asked), after showing what it
// runs; without it, it refuses and writes nothing. Trusted, its stop hook
// timeout covers the configured command checks. A global install trusts
// nothing and takes no value from the project's file.
func TestInstallTrustsAndTimesOut(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{home, filepath.Join(proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(proj, "project.yaml"), "workflow:\n  checks:\n    - beads\n    - {type: command, run: \"go test ./...\", timeout: 5m}\n")
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	if code, out, errOut := runIn(t, proj, env, "", "install", "claude", "--global"); code != 0 || strings.Contains(out, "trusted") {
		t.Fatalf("install --global: exit %d\n%s%s", code, out, errOut)
	}
	if global, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json")); !strings.Contains(string(global), `"timeout": 30`) || strings.Contains(string(global), `"timeout": 33`) {
		t.Errorf("install --global took the stop timeout (5m30s and more) from the untrusted project.yaml:\n%s", global)
	}
	if _, out, _ := runIn(t, proj, env, "", "doctor"); !strings.Contains(out, "untrusted") {
		t.Errorf("a global install trusted the project:\n%s", out)
	}
	code, out, errOut := runIn(t, proj, env, "", "install", "claude")
	if code != 4 || !strings.Contains(out, "workflow.checks[1].run") || !strings.Contains(out, "go test ./...") || !strings.Contains(errOut, "then run again with --trust") {
		t.Errorf("install without --trust: exit %d, want 4 with what the file runs\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude")); !os.IsNotExist(err) {
		t.Errorf("install without --trust wrote .claude (%v)", err)
	}
	code, out, errOut = runIn(t, proj, env, "", "install", "claude", "--trust")
	if code != 0 || !strings.Contains(out, "trusted "+proj) {
		t.Fatalf("install --trust: exit %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := runIn(t, proj, env, "", "doctor"); !strings.Contains(out, proj+" is trusted") {
		t.Errorf("install did not trust the project:\n%s", out)
	}
	data, err := os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	// 30s for bd + 5m for the check + the runner's grace.
	want := int(doctor.HookTimeout(mustLoad(t, proj, env)).Seconds())
	if want <= 330 {
		t.Fatalf("doctor.HookTimeout = %ds, want more than 330s", want)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string
				Timeout int
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	stops := 0
	for _, g := range doc.Hooks["Stop"] {
		for _, h := range g.Hooks {
			if stops++; h.Timeout != want {
				t.Errorf("stop hook timeout %ds, want %ds\n%s", h.Timeout, want, data)
			}
		}
	}
	if stops == 0 {
		t.Errorf("no stop hook written:\n%s", data)
	}
	if !strings.Contains(string(data), `"timeout": 30`) {
		t.Errorf("the prompt and session hooks lost their 30s timeout:\n%s", data)
	}
}

func mustLoad(t *testing.T, dir string, env []string) *config.Config {
	t.Helper()
	cfg, _, err := config.Load(config.LoadOptions{StartDir: dir, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
