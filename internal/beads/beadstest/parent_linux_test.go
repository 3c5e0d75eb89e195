package beadstest

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestDieWithParent: a child started with dieWithParent (as the Dolt
// server is) dies with the test process that started it, even when that
// process is killed and runs no cleanup.
func TestDieWithParent(t *testing.T) {
	if os.Getenv("BEADSTEST_PARENT") == "1" {
		child := exec.Command("sleep", "60")
		dieWithParent(child)
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
		select {}
	}
	parent := exec.Command(os.Args[0], "-test.run", "^TestDieWithParent$")
	parent.Env = append(os.Environ(), "BEADSTEST_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		parent.Process.Kill()
		t.Fatalf("no child pid: %v", err)
	}
	pid, _ := strconv.Atoi(line[:len(line)-1])
	parent.Process.Kill()
	parent.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// The child is gone, or a zombie waiting for init to reap it.
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || syscall.Kill(pid, 0) != nil || containsState(st, 'Z') {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d outlived its killed parent", pid)
		}
	}
}

// containsState reports whether a /proc/PID/stat line shows state s.
func containsState(stat []byte, s byte) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == s
		}
	}
	return false
}
