package claim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads"
)

// fakeTracker serves issues from a map and records claims.
type fakeTracker struct {
	issues map[string]beads.Issue
	claims []string
}

func (f *fakeTracker) Show(_ context.Context, id string) (beads.Issue, error) {
	is, ok := f.issues[id]
	if !ok {
		return beads.Issue{}, &beads.Error{Kind: beads.KindNotFound, Msg: "no issue " + id}
	}
	return is, nil
}

func (f *fakeTracker) ClaimID(_ context.Context, id, actor string) (beads.Issue, error) {
	f.claims = append(f.claims, id+" "+actor)
	is := f.issues[id]
	is.Status, is.Assignee = beads.StatusInProgress, actor
	return is, nil
}

func newFake() *fakeTracker {
	return &fakeTracker{issues: map[string]beads.Issue{
		"p-1":   {ID: "p-1", Title: "Goal", Status: "open"},
		"p-1.1": {ID: "p-1.1", Title: "Task \"quoted\"", Status: "open", Parent: "p-1", AcceptanceCriteria: "works"},
	}}
}

func TestTemplatesOverride(t *testing.T) {
	root := t.TempDir()
	tmpl := filepath.Join(root, "tmpl")
	os.MkdirAll(tmpl, 0o755)
	os.WriteFile(filepath.Join(tmpl, "RESULTS.md"), []byte("custom results for {{.Task.ID}}\n"), 0o644)
	r := Request{Task: "p-1.1", Actor: "a", Root: root, Templates: tmpl, Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	res, err := Claim(context.Background(), newFake(), r)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(res.RunDir, "RESULTS.md"))
	if string(got) != "custom results for p-1.1\n" {
		t.Errorf("override not used: %q", got)
	}
	// Files missing from the override directory fall back to the embedded ones.
	thoughts, _ := os.ReadFile(filepath.Join(res.RunDir, "THOUGHTS.md"))
	if !strings.Contains(string(thoughts), "- [ ] works") {
		t.Errorf("embedded THOUGHTS.md: %s", thoughts)
	}
	// YAML stays valid with quotes in titles; the plan is the only ancestor,
	// so there is no goal.
	meta, _ := os.ReadFile(filepath.Join(res.RunDir, "metadata.yaml"))
	if !strings.Contains(string(meta), `title: "Task \"quoted\""`) || !strings.Contains(string(meta), `goal: ""`) || !strings.Contains(string(meta), `plan: "p-1"`) {
		t.Errorf("metadata.yaml:\n%s", meta)
	}
	// The same second again: a second folder with a suffix.
	res2, err := Claim(context.Background(), newFake(), r)
	if err != nil || res2.RunDir != res.RunDir+"-2" {
		t.Errorf("second run dir %s (%v)", res2.RunDir, err)
	}
}

func TestBrokenTemplateCreatesNothing(t *testing.T) {
	root := t.TempDir()
	tmpl := filepath.Join(root, "tmpl")
	os.MkdirAll(tmpl, 0o755)
	os.WriteFile(filepath.Join(tmpl, "LEARNINGS.md"), []byte("{{.NoSuchField}}"), 0o644)
	f := newFake()
	_, err := Claim(context.Background(), f, Request{Task: "p-1.1", Actor: "a", Root: root, Templates: tmpl, Now: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "LEARNINGS.md") {
		t.Fatalf("err = %v", err)
	}
	if len(f.claims) != 0 {
		t.Errorf("claimed in beads despite the broken template: %v", f.claims)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "runs")); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestHeldBeforeClaimChangesNothing(t *testing.T) {
	f := newFake()
	is := f.issues["p-1.1"]
	is.Status, is.Assignee, is.StartedAt = beads.StatusInProgress, "bob@s9", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.issues["p-1.1"] = is
	_, err := Claim(context.Background(), f, Request{Task: "p-1.1", Actor: "a@s1", Root: t.TempDir(), Now: time.Now()})
	if err == nil || err.Error() != "p-1.1 is already claimed by bob@s9 since 2026-01-01T00:00:00Z" {
		t.Errorf("err = %v", err)
	}
	if len(f.claims) != 0 {
		t.Errorf("bd claim attempted: %v", f.claims)
	}
}
