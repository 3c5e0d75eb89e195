//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/beads/beadstest"
	"github.com/runtasks/runtasks/internal/shell"
)

// netHosts are "machines" made of network namespaces on this one: a bridge
// in its own namespace, and one namespace per host with a veth on it. The
// root namespace gets no address.
type netHosts struct {
	t      *testing.T
	prefix string
	subnet string // "198.18.N"
}

func (n *netHosts) ns(i int) string { return fmt.Sprintf("%sh%d", n.prefix, i) }
func (n *netHosts) ip(i int) string { return fmt.Sprintf("%s.%d", n.subnet, 10+i) }

func (n *netHosts) run(args ...string) {
	n.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		n.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newNetHosts makes hosts 0…count-1 on one bridge. It fails, with the
// reason, where network namespaces cannot be made (not root, no ip).
func newNetHosts(t *testing.T, count int) *netHosts {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("this test builds hosts from network namespaces (ip netns, veth pairs, a bridge) and needs root; run it as root on Linux")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("this test needs iproute2's ip for network namespaces: %v", err)
	}
	id := os.Getpid() % 100000
	n := &netHosts{t: t, prefix: fmt.Sprintf("rt%d", id), subnet: fmt.Sprintf("198.18.%d", 1+id%250)}
	sw := n.prefix + "sw"
	t.Cleanup(func() {
		for i := range count {
			n.killAll(i)
			exec.Command("ip", "netns", "del", n.ns(i)).Run()
		}
		exec.Command("ip", "netns", "del", sw).Run()
	})
	n.run("netns", "add", sw)
	n.run("-n", sw, "link", "add", "br0", "type", "bridge")
	n.run("-n", sw, "link", "set", "br0", "up")
	for i := range count {
		h, v := n.ns(i), fmt.Sprintf("%sv%d", n.prefix, i)
		n.run("netns", "add", h)
		n.run("link", "add", v, "netns", sw, "type", "veth", "peer", "name", "eth0", "netns", h)
		n.run("-n", sw, "link", "set", v, "master", "br0")
		n.run("-n", sw, "link", "set", v, "up")
		n.run("-n", h, "link", "set", "lo", "up")
		n.run("-n", h, "addr", "add", n.ip(i)+"/24", "dev", "eth0")
		n.run("-n", h, "link", "set", "eth0", "up")
	}
	return n
}

// killAll kills every process in host i's namespace (SIGKILL): the host
// dies.
func (n *netHosts) killAll(i int) []int {
	out, _ := exec.Command("ip", "netns", "pids", n.ns(i)).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			pids = append(pids, pid)
		}
	}
	return pids
}

// cmd is a command run in host i, in its own process group.
func (n *netHosts) cmd(i int, dir string, env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command("ip", append([]string{"netns", "exec", n.ns(i), name}, args...)...)
	c.Dir, c.Env = dir, env
	shell.NewGroup(c, time.Second)
	return c
}

func (n *netHosts) must(i int, dir string, env []string, name string, args ...string) string {
	n.t.Helper()
	c := n.cmd(i, dir, env, name, args...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		n.t.Fatalf("host %d: %s %s: %v\n%s%s", i, name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// historyRow is one version of a task's row in Dolt's history of bd's
// issues table (dolt_history_issues): every bd write is a Dolt commit.
type historyRow struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Assignee string `json:"assignee"`
	Commit   string `json:"commit_hash"`
	Date     string `json:"commit_date"`
	n        int    // the commit's place in dolt_log (0: the newest)
	at       time.Time
}

// TestIntegrationMultiHost: four hosts made of network namespaces. Host 0
// runs dolt sql-server; hosts 1–3 each run `runtasks run --workers 2` with
// a scripted fake agent (claims, works 3 s, merges, closes) on one epic of
// 30 tasks through that server. Host 3 is killed (every process of it)
// mid-task. bd runs with its defaults, its events journal off, as users
// run it. From Dolt's history of the issues table: every task is closed
// exactly once, none is ever held by two workers at once, and the tasks
// host 3 held are reclaimed and closed by another host within one lease
// (5 min) and one cycle; hosts 1 and 2 end with exit 0 when the epic is
// done.
func TestIntegrationMultiHost(t *testing.T) {
	t.Parallel()
	const (
		tasks    = 30
		port     = "3307"
		password = "beads-pw"
	)
	dolt := beadstest.RealDolt(t)
	bd := beadstest.RealBD(t)
	for _, name := range []string{"runtasks", "fakeagent"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Fatalf("%s is not on PATH (the test binary provides it): %v", name, err)
		}
	}
	n := newNetHosts(t, 4)
	top := t.TempDir()

	// Host 0: the database host.
	h0 := filepath.Join(top, "h0")
	data := filepath.Join(h0, "data")
	os.MkdirAll(data, 0o755)
	env0 := append(os.Environ(), "HOME="+h0)
	for _, kv := range [][2]string{{"user.name", "beads-server"}, {"user.email", "beads@example.invalid"}, {"metrics.disabled", "true"}} {
		n.must(0, h0, env0, dolt, "config", "--global", "--add", kv[0], kv[1])
	}
	logf, _ := os.Create(filepath.Join(h0, "server.log"))
	defer logf.Close()
	server := n.cmd(0, data, env0, dolt, "sql-server", "--host", "0.0.0.0", "--port", port, "--data-dir", data)
	server.Stdout, server.Stderr = logf, logf
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	// From host 1, through the bridge: the server answers.
	deadline := time.Now().Add(60 * time.Second)
	for exec.Command("ip", "netns", "exec", n.ns(1), "bash", "-c", "exec 3<>/dev/tcp/"+n.ip(0)+"/"+port).Run() != nil {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(h0, "server.log"))
			t.Fatalf("dolt sql-server on %s:%s does not answer from host 1:\n%s", n.ip(0), port, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// root is root@localhost only: a user the other hosts log in as.
	// (DOLT_CLI_PASSWORD: dolt sql as a client, without a prompt.)
	n.must(0, h0, append(env0, "DOLT_CLI_PASSWORD="), dolt, "--host", "127.0.0.1", "--port", port, "--user", "root", "--no-tls", "sql", "-q",
		"CREATE USER 'beads'@'%' IDENTIFIED BY '"+password+"'; GRANT ALL PRIVILEGES ON *.* TO 'beads'@'%' WITH GRANT OPTION;")

	// Hosts 1–3: a repository and a .beads each, in server mode.
	type host struct {
		dir, repo, trace string
		env              []string
	}
	hosts := make([]host, 4)
	for i := 1; i <= 3; i++ {
		h := host{dir: filepath.Join(top, fmt.Sprintf("h%d", i))}
		h.repo, h.trace = filepath.Join(h.dir, "repo"), filepath.Join(h.dir, "trace")
		for _, d := range []string{h.repo, filepath.Join(h.dir, "tmp")} {
			os.MkdirAll(d, 0o755)
		}
		h.env = append(os.Environ(), "HOME="+h.dir, "TMPDIR="+filepath.Join(h.dir, "tmp"),
			"BD_DISABLE_METRICS=1", "BD_NON_INTERACTIVE=1", "NO_COLOR=1",
			"BEADS_DOLT_PASSWORD="+password, "BEADS_DOLT_SERVER_PORT="+port, fmt.Sprintf("BEADS_ACTOR=host%d", i),
			"GIT_AUTHOR_NAME=tester", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=tester", "GIT_COMMITTER_EMAIL=t@example.com",
			"FAKEAGENT_MODE=task", "FAKEAGENT_TRACE="+h.trace, "FAKEAGENT_SLEEP=3s")
		os.WriteFile(filepath.Join(h.repo, ".gitignore"), []byte(".worktrees/\n"), 0o644)
		os.WriteFile(filepath.Join(h.repo, "project.yaml"), []byte("run:\n  claude_bin: fakeagent\nbeads:\n  timeout: 30s\n"), 0o644)
		n.must(i, h.repo, h.env, "git", "init", "-q")
		n.must(i, h.repo, h.env, "git", "add", ".")
		n.must(i, h.repo, h.env, "git", "commit", "-qm", "init")
		args := []string{"init", "--server", "--server-host", n.ip(0), "--server-port", port, "--server-user", "beads", "--external",
			"--prefix", "mh", "--non-interactive", "--stealth", "--skip-agents", "--skip-hooks", "-q"}
		if i > 1 {
			args = append(args, "--database", "mh") // joins the database host 1 made
		}
		n.must(i, h.repo, h.env, bd, args...)
		hosts[i] = h
	}
	h1 := hosts[1]
	n.must(1, h1.repo, h1.env, bd, "create", "Epic", "--type", "epic", "--id", "mh-e", "--json")
	for k := 1; k <= tasks; k++ {
		n.must(1, h1.repo, h1.env, bd, "create", fmt.Sprintf("Task %d", k), "--parent", "mh-e", "--json")
	}

	// Every host works the epic with two workers.
	type running struct {
		cmd  *exec.Cmd
		out  string
		done chan error
	}
	runs := make([]running, 4)
	start := time.Now()
	for i := 1; i <= 3; i++ {
		h := hosts[i]
		out := filepath.Join(h.dir, "run.out")
		f, _ := os.Create(out)
		c := n.cmd(i, h.repo, h.env, "runtasks", "run", "--epic", "mh-e", "--workers", "2", "--max-cycles", "40",
			"--heartbeat", "20s", "--plain", "--run-id", fmt.Sprintf("host%d", i))
		c.Stdout, c.Stderr = f, f
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		runs[i] = running{cmd: c, out: out, done: done}
	}
	// Host 3 dies mid-task: once its agents have started two tasks, every
	// process in its namespace is killed.
	var killedAt time.Time
	var held []string
	for deadline := time.Now().Add(3 * time.Minute); ; {
		started, ended := traceIDs(hosts[3].trace, "start"), traceIDs(hosts[3].trace, "end")
		if len(started) >= 2 {
			for _, id := range started {
				if !slices.Contains(ended, id) {
					held = append(held, id)
				}
			}
			if len(held) > 0 {
				killedAt = time.Now()
				n.killAll(3)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("host 3 never started a task:\n%s", readFile(runs[3].out))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("host 3 killed at +%s holding %v", killedAt.Sub(start).Round(time.Second), held)

	// Hosts 1 and 2 finish the epic, with exit 0.
	for i := 1; i <= 2; i++ {
		select {
		case err := <-runs[i].done:
			if err != nil {
				t.Errorf("host %d: runtasks run: %v\n%s", i, err, readFile(runs[i].out))
			}
		case <-time.After(12 * time.Minute):
			t.Fatalf("host %d: runtasks run did not end:\n%s", i, readFile(runs[i].out))
		}
	}
	<-runs[3].done
	t.Logf("epic done at +%s", time.Since(start).Round(time.Second))

	// Dolt's history of the issues table, in the server's commit order.
	sqlJSON := func(q string, v any) {
		out := n.must(0, h0, append(env0, "DOLT_CLI_PASSWORD="), dolt, "--host", "127.0.0.1", "--port", port, "--user", "root", "--no-tls",
			"--use-db", "mh", "sql", "-r", "json", "-q", q)
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, out)
		}
	}
	var log, hist struct{ Rows []historyRow }
	sqlJSON("SELECT commit_hash FROM dolt_log", &log)
	sqlJSON("SELECT id, status, assignee, commit_hash, commit_date FROM dolt_history_issues WHERE id LIKE 'mh-e.%'", &hist)
	place := map[string]int{}
	for i, r := range log.Rows {
		place[r.Commit] = i
	}
	recs := hist.Rows
	for i := range recs {
		recs[i].n = place[recs[i].Commit]
		recs[i].at, _ = time.ParseInLocation("2006-01-02 15:04:05.999", recs[i].Date, time.UTC)
	}
	slices.SortStableFunc(recs, func(a, b historyRow) int { return b.n - a.n })
	holder := map[string]string{}
	status := map[string]string{}
	closes := map[string]int{}
	closedBy := map[string]historyRow{}
	reclaimedAt := map[string]time.Time{}
	for _, r := range recs {
		was, prev := holder[r.ID], status[r.ID]
		now := ""
		if r.Status == "in_progress" {
			now = r.Assignee
		}
		if was != "" && now != "" && now != was {
			t.Errorf("%s held by %s and %s at once (commit %s)", r.ID, was, now, r.Commit)
		}
		if r.Status == "closed" && prev != "closed" {
			closes[r.ID]++
			closedBy[r.ID] = r
		}
		if strings.Contains(was, "host3") && now == "" && r.Status == "open" {
			reclaimedAt[r.ID] = r.at // host 3 was dead: another host reclaimed it
		}
		holder[r.ID], status[r.ID] = now, r.Status
	}
	for k := 1; k <= tasks; k++ {
		id := fmt.Sprintf("mh-e.%d", k)
		if closes[id] != 1 {
			t.Errorf("%s closed %d times, want exactly once", id, closes[id])
		}
	}
	for _, id := range held {
		c, ok := closedBy[id]
		switch {
		case !ok:
			t.Errorf("%s (held by host 3 when it died) never closed", id)
		case strings.Contains(c.Assignee, "host3"):
			// Host 3's agent closed it just before it died.
		default:
			limit := 5*time.Minute + 90*time.Second // one lease and one cycle (and bd's second-granular clock)
			if reclaimedAt[id].IsZero() {
				t.Errorf("%s: no reclaim in the history before %s closed it", id, c.Assignee)
			}
			if d := c.at.Sub(killedAt); d > limit {
				t.Errorf("%s closed by %s %s after host 3 died, want within %s", id, c.Assignee, d.Round(time.Second), limit)
			}
			t.Logf("%s: reclaimed at +%s, closed by %s at +%s after the kill", id, reclaimedAt[id].Sub(killedAt).Round(time.Second), c.Assignee, c.at.Sub(killedAt).Round(time.Second))
		}
	}
	for i := 1; i <= 2; i++ {
		if out := readFile(runs[i].out); !strings.Contains(out, "30/30 closed; exit 0") {
			t.Errorf("host %d's last line is not the epic's end:\n%s", i, lastLines(out, 5))
		}
	}
}

// traceIDs are the ids of a fake worker's trace lines of one kind.
func traceIDs(path, kind string) []string {
	b, _ := os.ReadFile(path)
	var ids []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == kind {
			ids = append(ids, f[1])
		}
	}
	return ids
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-k):], "\n")
}
