package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBindingPathStaysInside(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	for _, id := range []string{"../../etc/passwd", "/abs", "a/b", "..", "x\x00y", strings.Repeat("z", 5000), "ok-1"} {
		p, err := s.BindingPath(id)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(p) != filepath.Join(s.Dir, bindingsDir) {
			t.Errorf("%q -> %s escapes the bindings dir", id, p)
		}
	}
	a, _ := s.BindingPath("a/b")
	b, _ := s.BindingPath("a_b")
	if a == b {
		t.Error("distinct sessions share a binding file")
	}
	if _, err := s.BindingPath(""); err != ErrNoSession {
		t.Errorf("empty session: %v", err)
	}
}

func TestBindingUpdateListRemove(t *testing.T) {
	s := &Store{Dir: t.TempDir(), Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	if b, err := s.Binding("s1"); err != nil || !b.Empty() || b.Session != "s1" {
		t.Fatalf("unbound: %+v %v", b, err)
	}
	if _, err := s.UpdateBinding("s1", func(b *Binding) error { b.Epic = "bd-e"; return nil }); err != nil {
		t.Fatal(err)
	}
	s.UpdateBinding("../s2", func(b *Binding) error {
		b.AddClaim(ClaimedRun{Task: "bd-t", RunDir: "/r1"})
		b.AddClaim(ClaimedRun{Task: "bd-t", RunDir: "/r2"}) // replaces
		return nil
	})
	all, err := s.Bindings()
	if err != nil || len(all) != 2 {
		t.Fatalf("bindings %+v %v", all, err)
	}
	b, _ := s.Binding("../s2")
	if len(b.Claims) != 1 || b.Claims[0].RunDir != "/r2" {
		t.Errorf("claims %+v", b.Claims)
	}
	// Emptied: the file goes.
	s.UpdateBinding("s1", func(b *Binding) error { b.Epic = ""; return nil })
	if p, _ := s.BindingPath("s1"); fileExists(p) {
		t.Error("empty binding kept")
	}
	// Corrupt: read as unbound, replaced at the next update.
	p, _ := s.BindingPath("s3")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("{not json"), 0o644)
	var warned string
	s.Warn = func(m string) { warned = m }
	if b, err := s.Binding("s3"); err != nil || !b.Empty() || warned == "" {
		t.Errorf("corrupt: %+v %v warn %q", b, err, warned)
	}
	if b, err := s.UpdateBinding("s3", func(b *Binding) error { b.Epic = "e"; return nil }); err != nil || b.Epic != "e" {
		t.Errorf("replace corrupt: %+v %v", b, err)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
