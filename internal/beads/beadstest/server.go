package beadstest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runtasks/runtasks/internal/shell"
)

// DoltServer is a `dolt sql-server` on 127.0.0.1 for one test: its own
// port, data directory (Dir) and HOME, in a process group the test's
// cleanup kills.
type DoltServer struct {
	t              testing.TB
	Bin, Host, Dir string
	Port           int
	env            []string
	log            string

	cmd   *exec.Cmd
	group *shell.Group
	done  chan struct{}
}

// StartDoltServer starts a server and waits until it accepts connections.
func StartDoltServer(t testing.TB) *DoltServer {
	t.Helper()
	bin := RealDolt(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	s := &DoltServer{t: t, Bin: bin, Host: "127.0.0.1", Dir: filepath.Join(dir, "data"), env: append(os.Environ(), "HOME="+home, "DOLT_ROOT_PATH="+home), log: filepath.Join(dir, "server.log")}
	for _, d := range []string{s.Dir, filepath.Join(home, ".dolt")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// dolt's global configuration (what dolt config --global writes, under
	// DOLT_ROOT_PATH or else HOME);
	// metrics off: nothing leaves the machine.
	cfg := `{"user.name": "beads-server", "user.email": "beads@example.invalid", "metrics.disabled": "true"}`
	if err := os.WriteFile(filepath.Join(home, ".dolt", "config_global.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port // free now
	l.Close()
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// Start (re)starts the server and waits until it accepts connections (60 s at most).
func (s *DoltServer) Start() {
	s.t.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	defer logf.Close()
	s.cmd = exec.Command(s.Bin, "sql-server", "--host", s.Host, "--port", strconv.Itoa(s.Port), "--data-dir", s.Dir)
	s.cmd.Dir = s.Dir
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.group = shell.NewGroup(s.cmd, 5*time.Second)
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("dolt sql-server: %v", err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
	addr, timeout := net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), time.After(60*time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-s.done:
			s.t.Fatalf("dolt sql-server exited before it accepted connections:\n%s", s.Log())
		case <-timeout:
			s.Stop()
			s.t.Fatalf("dolt sql-server did not accept connections on %s within 60s:\n%s", addr, s.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops the server's process group (SIGTERM, SIGKILL after 5 s) and
// waits for it (a stopped server: nothing).
func (s *DoltServer) Stop() {
	if s.cmd == nil {
		return
	}
	s.group.Stop(shell.Terminate)
	<-s.done
	s.group.Reap()
	s.cmd = nil
}

// Log is the server's output so far (bounded).
func (s *DoltServer) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b[max(len(b)-4000, 0):])
}

// NewServerStore initialises a stealth store in server mode against srv
// (bd never starts or stops it), with BEADS_DOLT_SERVER_PORT as
// docs/scale.md recommends and a TMPDIR of its own (bd's circuit breaker
// keeps its state there).
func NewServerStore(t testing.TB, prefix string, srv *DoltServer) *Store {
	t.Helper()
	s := newStore(t, "TMPDIR="+t.TempDir(), "BEADS_DOLT_SERVER_PORT="+strconv.Itoa(srv.Port))
	s.BD(append([]string{"init", "--server", "--server-host", srv.Host, "--server-port", strconv.Itoa(srv.Port), "--external",
		"--prefix", prefix}, initFlags...)...)
	if meta, err := os.ReadFile(filepath.Join(s.Root, ".beads", "metadata.json")); err != nil || !strings.Contains(string(meta), `"dolt_mode": "server"`) {
		t.Fatalf("bd init --server did not write a server-mode store: %v\n%s", err, meta)
	}
	return s
}
