package trust

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestCheckStates(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	root := t.TempDir()
	v1, v2 := []byte("workflow:\n  epic: a-1\n"), []byte("workflow:\n  epic: a-2\n")
	check := func(content []byte, want State) {
		t.Helper()
		got, err := st.Check(root, content)
		if err != nil || got != want {
			t.Fatalf("Check = %v, %v; want %v", got, err, want)
		}
	}
	check(v1, Untrusted)
	if _, err := st.Trust(root, filepath.Join(root, "project.yaml"), v1, time.Now()); err != nil {
		t.Fatal(err)
	}
	check(v1, Trusted)
	check(v2, Changed)
	// Another root, even a parent or child, is not trusted by this one.
	if got, _ := st.Check(filepath.Dir(root), v1); got != Untrusted {
		t.Fatalf("parent: %v", got)
	}
	if got, _ := st.Check(filepath.Join(root, "sub"), v1); got != Untrusted {
		t.Fatalf("child: %v", got)
	}
	// A relative or uncleaned root names the same project.
	if got, _ := st.Check(root+"/./", v1); got != Trusted {
		t.Fatalf("uncleaned root: %v", got)
	}
	if removed, err := st.Untrust(root); err != nil || !removed {
		t.Fatalf("Untrust = %v, %v", removed, err)
	}
	check(v1, Untrusted)
	if removed, err := st.Untrust(root); err != nil || removed {
		t.Fatalf("second Untrust = %v, %v", removed, err)
	}
}

// A record that is not one (a FIFO, garbage) makes nothing trusted and
// says why; it never hangs.
func TestBrokenRecord(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	root := t.TempDir()
	_, p, _ := st.path(root)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Check(root, nil); got != Untrusted || err == nil {
		t.Fatalf("garbage record: %v, %v", got, err)
	}
	os.Remove(p)
	if err := mkfifo(p); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if got, err := st.Check(root, nil); got != Untrusted || err == nil {
			t.Errorf("FIFO record: %v, %v", got, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Check hung on a FIFO")
	}
	// Trusting again replaces the broken record.
	if _, err := st.Trust(root, "", []byte("x"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Check(root, []byte("x")); got != Trusted || err != nil {
		t.Fatalf("after Trust: %v, %v", got, err)
	}
}

// Concurrent writers of many projects and of one project: every record is
// whole, and the last write of each project stands.
func TestConcurrentWriters(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	base := t.TempDir()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			root := filepath.Join(base, "p", string(rune('a'+i%8)))
			if _, err := st.Trust(root, "", []byte{byte(i % 8)}, time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		root := filepath.Join(base, "p", string(rune('a'+i)))
		if got, err := st.Check(root, []byte{byte(i)}); got != Trusted || err != nil {
			t.Errorf("%s: %v, %v", root, got, err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(st.Dir, "trusted", ".trust-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		xdg, home, want string
		err             bool
	}{
		{"/x/config", "/h", "/x/config/runtasks", false},
		{"relative", "/h", "/h/.config/runtasks", false},
		{"", "/h", "/h/.config/runtasks", false},
		{"", "", "", true},
	}
	for _, tc := range tests {
		env := map[string]string{"XDG_CONFIG_HOME": tc.xdg, "HOME": tc.home}
		got, err := DefaultDir(func(k string) string { return env[k] })
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("DefaultDir(%q, %q) = %q, %v; want %q", tc.xdg, tc.home, got, err, tc.want)
		}
	}
}
