package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
)

// stuckGit runs git in the store's repository.
func stuckGit(t *testing.T, s *beadstest.Store, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.Root
	cmd.Env = s.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// stuckStop sends one Stop to runtasks stop-hook for the session.
func stuckStop(t *testing.T, s *beadstest.Store, env []string, epic, msg string) stopAnswer {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"session_id": "orch-1", "cwd": s.Root, "hook_event_name": "Stop", "last_assistant_message": msg})
	code, out, errOut := runIn(t, s.Root, env, string(in), "stop-hook", "--epic", epic)
	if code != 0 {
		t.Fatalf("stop-hook exit %d: %s", code, errOut)
	}
	var a stopAnswer
	if strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("stdout is not one JSON object: %q", out)
		}
	}
	return a
}

func bdIssue(t *testing.T, s *beadstest.Store, id string) (status, notes string) {
	t.Helper()
	var v []struct {
		Status string `json:"status"`
		Notes  string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(s.BD("show", id, "--json")), &v); err != nil || len(v) != 1 {
		t.Fatalf("bd show %s: %v", id, err)
	}
	return v[0].Status, v[0].Notes
}

// TestIntegrationStuckBlock: with the real bd and real git worktrees, a task
// whose worktree exists is waited for; one whose worktree is gone is set to
// blocked with a note; when everything left is blocked (by status or by a
// dependency) the stop is allowed as an escalation; status shows it all.
func TestIntegrationStuckBlock(t *testing.T) {
	s := beadstest.NewStore(t, "stk")
	stuckGit(t, s, "commit", "-q", "--allow-empty", "-m", "init")
	epic := s.Create("Epic", "--type", "epic")
	live := s.Create("Live task", "--parent", epic)
	gone := s.Create("Gone task", "--parent", epic)
	after := s.Create("After live", "--parent", epic)
	s.Block(after, live)
	s.Status(live, "in_progress")
	s.Status(gone, "in_progress")
	wt := filepath.Join(s.Root, ".worktrees", "agent-"+live)
	stuckGit(t, s, "worktree", "add", "-q", "-b", "agent-"+live, wt)

	a := stuckStop(t, s, s.Env, epic, "Waiting for the workers.")
	if a.Decision != "block" {
		t.Fatalf("first stop: want block, got %+v", a)
	}
	for _, want := range []string{gone + " (worktree .worktrees/agent-" + gone + " is gone)", "wait for each", live + " in "} {
		if !strings.Contains(a.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, a.Reason)
		}
	}
	if st, notes := bdIssue(t, s, gone); st != "blocked" || !strings.Contains(notes, "Agent exited without completing (runtasks, ") {
		t.Fatalf("%s: status %q notes %q, want blocked with the note", gone, st, notes)
	}
	if st, _ := bdIssue(t, s, live); st != "in_progress" {
		t.Fatalf("%s (live worktree) changed to %q", live, st)
	}

	// The live task's worktree goes away: it is stuck too; all that is left
	// is blocked (one by status, one by a dependency): escalation.
	stuckGit(t, s, "worktree", "remove", wt)
	a = stuckStop(t, s, s.Env, epic, "Waiting.")
	if a.Decision != "" || !strings.Contains(a.SystemMessage, "needs a person") || !strings.Contains(a.SystemMessage, live) {
		t.Fatalf("second stop: want an escalation naming %s, got %+v", live, a)
	}
	if st, _ := bdIssue(t, s, live); st != "blocked" {
		t.Fatalf("%s: status %q, want blocked", live, st)
	}

	code, out, errOut := runIn(t, s.Root, s.Env, "", "status", "--epic", epic)
	if code != 0 {
		t.Fatalf("status: %d %s", code, errOut)
	}
	for _, want := range []string{"Beads changed by runtasks", gone + " stuck (worktree", "status set to blocked, note appended", "escalated"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runIn(t, s.Root, s.Env, "", "status", "--epic", epic, "--jq", `[.history[].actions // [] | .[]] | length`)
	if code != 0 || strings.TrimSpace(out) != "2" {
		t.Errorf("status --jq actions: %d %q, want 2", code, out)
	}
}

// TestIntegrationStuckReopen: stuck_action reopen puts a stuck task back to
// open; it is ready again, so the stop is blocked.
func TestIntegrationStuckReopen(t *testing.T) {
	s := beadstest.NewStore(t, "rop")
	stuckGit(t, s, "commit", "-q", "--allow-empty", "-m", "init")
	epic := s.Create("Epic", "--type", "epic")
	task := s.Create("Abandoned", "--parent", epic)
	s.Status(task, "in_progress")
	// Worktrees are in use (another task has one); this task's is gone.
	stuckGit(t, s, "worktree", "add", "-q", "-b", "agent-other", filepath.Join(s.Root, ".worktrees", "agent-other"))

	env := append(append([]string(nil), s.Env...), "RUNTASKS_WORKFLOW__STUCK_ACTION=reopen")
	a := stuckStop(t, s, env, epic, "Stopping.")
	if a.Decision != "block" || !strings.Contains(a.Reason, "1 stuck task(s) reopened") || !strings.Contains(a.Reason, "1 ready") {
		t.Fatalf("want a block naming the reopened task, got %+v", a)
	}
	if st, notes := bdIssue(t, s, task); st != "open" || !strings.Contains(notes, "Agent exited without completing") {
		t.Fatalf("%s: status %q notes %q, want open with the note", task, st, notes)
	}
	// Next stop: the task is plainly ready.
	a = stuckStop(t, s, env, epic, "Stopping.")
	if a.Decision != "block" || strings.Contains(a.Reason, "stuck") {
		t.Fatalf("second stop: %+v", a)
	}
}

// TestIntegrationStuckReportStartedAt: without worktrees, a task started
// longer than stuck_after ago is stuck; report changes nothing in beads and
// says so, and the stop is allowed for a person to look.
func TestIntegrationStuckReportStartedAt(t *testing.T) {
	s := beadstest.NewStore(t, "rep")
	epic := s.Create("Epic", "--type", "epic")
	task := s.Create("Old work", "--parent", epic)
	s.Status(task, "in_progress")

	// Fresh: not stuck, the stop is blocked as before.
	a := stuckStop(t, s, s.Env, epic, "Stopping.")
	if a.Decision != "block" || strings.Contains(a.Reason, "stuck") {
		t.Fatalf("fresh task: %+v", a)
	}
	env := append(append([]string(nil), s.Env...), "RUNTASKS_WORKFLOW__STUCK_ACTION=report", "RUNTASKS_WORKFLOW__STUCK_AFTER=1ms")
	// bd keeps started_at to the second, and its store may round it up:
	// a stop less than half a second after the start can see it in the
	// future (CI, after the stop hook got faster). A second and a bit later
	// the task is older than 1ms whichever way the second went.
	time.Sleep(1100 * time.Millisecond)
	a = stuckStop(t, s, env, epic, "Stopping.")
	if a.Decision != "" || !strings.Contains(a.SystemMessage, "1 stuck task(s) reported: "+task+" (started") {
		t.Fatalf("old task: want an allowed stop reporting %s, got %+v", task, a)
	}
	if st, notes := bdIssue(t, s, task); st != "in_progress" || notes != "" {
		t.Fatalf("report changed beads: status %q notes %q", st, notes)
	}
}
