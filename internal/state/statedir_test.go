package state

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnsureStateDirAndMkdirIgnored(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(dir string) // dir does not exist before setup
		mk      func(dir string) error
		want    string // content of dir/.gitignore; "" = none
		wantDir bool
	}{
		{name: "state dir created", mk: EnsureStateDir, want: Gitignore},
		{name: "existing state dir without one", setup: func(d string) { os.MkdirAll(filepath.Join(d, "sessions"), 0o755) }, mk: EnsureStateDir, want: Gitignore},
		{name: "user's own .gitignore kept", setup: func(d string) {
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, ".gitignore"), []byte("!keep\n"), 0o644)
		}, mk: EnsureStateDir, want: "!keep\n"},
		{name: "a repository root never", setup: func(d string) { os.MkdirAll(filepath.Join(d, ".git"), 0o755) }, mk: EnsureStateDir},
		{name: "runs created", mk: MkdirIgnored, want: Gitignore},
		{name: "existing runs left alone", setup: func(d string) { os.MkdirAll(d, 0o755) }, mk: MkdirIgnored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b")
			if tt.setup != nil {
				tt.setup(dir)
			}
			if err := tt.mk(dir); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("%s not made: %v", dir, err)
			}
			got, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
			if tt.want == "" {
				if err == nil {
					t.Errorf(".gitignore written: %q", got)
				}
				return
			}
			if string(got) != tt.want {
				t.Errorf(".gitignore = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestIntegrationStateDirNeverDirtiesTheRepository: in a plain git
// repository with its own .gitignore and nothing excluded by hand, every
// write to the state directory leaves git status clean.
func TestIntegrationStateDirNeverDirtiesTheRepository(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n*.log\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644)
	git("add", ".")
	git("commit", "-qm", "init")

	s := &Store{Dir: filepath.Join(root, ".runtasks")}
	if err := s.Append(Record{Time: time.Now(), Session: "s", Epic: "e", Outcome: OutcomeContinue}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update("s", "e", func(st *State) error { st.Cycles++; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateBinding("s", func(b *Binding) error { b.Epic = "e"; return nil }); err != nil {
		t.Fatal(err)
	}
	// As a claim makes its run folder.
	if err := MkdirIgnored(filepath.Join(root, "runs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "runs", "run-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "runs", "run-1", "RESULTS.md"), []byte("r"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := git("status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(out) != "" {
		t.Errorf("git status after runtasks wrote its files:\n%s", out)
	}
}
