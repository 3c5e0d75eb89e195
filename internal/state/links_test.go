package state

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestReadyLinks: the ids remembered per epic come back for that epic
// only, are replaced and forgotten; a file that cannot be read is nothing
// remembered; concurrent writers never leave a torn file or a temp file.
func TestReadyLinks(t *testing.T) {
	s := &Store{Dir: filepath.Join(t.TempDir(), "state")}
	if got := s.ReadyLinks("bd-e"); got != nil {
		t.Fatalf("nothing remembered yet: %q", got)
	}
	if err := s.SetReadyLinks("bd-e", []string{"bd-x", "bd-y"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadyLinks("../bd-f", []string{"bd-z"}); err != nil {
		t.Fatal(err)
	}
	if got := s.ReadyLinks("bd-e"); !slices.Equal(got, []string{"bd-x", "bd-y"}) {
		t.Errorf("bd-e: %q", got)
	}
	if got := s.ReadyLinks("../bd-f"); !slices.Equal(got, []string{"bd-z"}) {
		t.Errorf("../bd-f: %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, ".gitignore")); err != nil {
		t.Errorf("the state directory was not made as runtasks makes it: %v", err)
	}
	if err := s.SetReadyLinks("bd-e", []string{"bd-x"}); err != nil {
		t.Fatal(err)
	}
	if got := s.ReadyLinks("bd-e"); !slices.Equal(got, []string{"bd-x"}) {
		t.Errorf("replaced: %q", got)
	}
	if err := s.SetReadyLinks("bd-e", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadyLinks("bd-e", nil); err != nil {
		t.Errorf("forgetting twice: %v", err)
	}
	if got := s.ReadyLinks("bd-e"); got != nil {
		t.Errorf("forgotten: %q", got)
	}
	if err := os.WriteFile(s.linksPath("bd-g"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.ReadyLinks("bd-g"); got != nil {
		t.Errorf("a corrupt file: %q", got)
	}

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ids := []string{"bd-x"}
			if i%2 == 0 {
				ids = []string{"bd-a", "bd-b", "bd-c", "bd-d"}
			}
			for range 20 {
				if err := s.SetReadyLinks("bd-h", ids); err != nil {
					t.Error(err)
				}
				if got := s.ReadyLinks("bd-h"); len(got) != 1 && len(got) != 4 {
					t.Errorf("torn: %q", got)
				}
			}
		})
	}
	wg.Wait()
	entries, _ := os.ReadDir(filepath.Join(s.Dir, linksDir))
	if len(entries) != 3 { // ../bd-f, bd-g, bd-h
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %q", names)
	}
	if st, err := s.List(); err != nil || len(st) != 0 {
		t.Errorf("remembered links are not session states: %v, %v", st, err)
	}
}
