package agentfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn does not return in time: a blocking open
// or an endless read is the bug these tests look for.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not return within %s", d)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "RESULTS.md")
	if err := os.WriteFile(regular, []byte("done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 11)), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	toRegular := filepath.Join(dir, "link")
	if err := os.Symlink(regular, toRegular); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		path string
		max  int64
		want string
		kind error
		msg  string
	}{
		{name: "regular", path: regular, max: 10, want: "done\n"},
		{name: "symlink to a regular file", path: toRegular, max: 10, want: "done\n"},
		{name: "exactly the cap", path: big, max: 11, want: strings.Repeat("x", 11)},
		{name: "over the cap", path: big, max: 10, kind: ErrTooLarge, msg: "larger than 10 bytes (11)"},
		{name: "FIFO without a writer", path: fifo, kind: ErrNotRegular, msg: "is a FIFO"},
		{name: "symlink to /dev/zero", path: zero, kind: ErrNotRegular, msg: "is a character device"},
		{name: "directory", path: dir, kind: ErrNotRegular, msg: "is a directory"},
		{name: "missing", path: filepath.Join(dir, "nope"), kind: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			within(t, 5*time.Second, func() { got, err = Read(tt.path, tt.max) })
			if tt.kind == nil {
				if err != nil || string(got) != tt.want {
					t.Fatalf("Read = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.kind) {
				t.Fatalf("Read error = %v; want %v", err, tt.kind)
			}
			if got != nil {
				t.Errorf("Read returned %d bytes with the error", len(got))
			}
			var ae *Error
			if tt.kind != fs.ErrNotExist && (!errors.As(err, &ae) || ae.Path != tt.path) {
				t.Errorf("error %v is not an *Error for %s", err, tt.path)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

func TestReadMaxText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, MaxText+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p, MaxText); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read(MaxText+1 bytes, MaxText) = %v; want ErrTooLarge", err)
	}
}

func TestOpenReturnsRegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, fi, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi.Size() != 3 {
		t.Errorf("size %d, want 3", fi.Size())
	}
	buf := make([]byte, 8)
	if n, _ := f.Read(buf); string(buf[:n]) != "abc" {
		t.Errorf("read %q", buf[:n])
	}
}
