package beads_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtasks/runtasks/internal/beads"
)

// TestFindStore: bd's store as bd would find it — beads.dir, then the
// variables, then .beads from the directory upwards — and, when there is
// none, where runtasks looked.
func TestFindStore(t *testing.T) {
	top := t.TempDir()
	proj := filepath.Join(top, "proj")
	sub := filepath.Join(proj, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, where, ok := beads.FindStore("", sub, nil); ok || !strings.Contains(where, "looked for .beads in "+sub+" and each directory above it") {
		t.Errorf("no store: ok %v, where %q", ok, where)
	}
	if err := os.Mkdir(filepath.Join(proj, ".beads"), 0o755); err != nil {
		t.Fatal(err)
	}
	if store, _, ok := beads.FindStore("", sub, nil); !ok || store != filepath.Join(proj, ".beads") {
		t.Errorf("from a subdirectory: %q %v", store, ok)
	}
	if store, where, ok := beads.FindStore("", top, []string{"BEADS_DIR=/elsewhere/.beads"}); !ok || store != "/elsewhere/.beads" || where != "BEADS_DIR=/elsewhere/.beads" {
		t.Errorf("BEADS_DIR: %q %q %v", store, where, ok)
	}
	if _, _, ok := beads.FindStore(filepath.Join(top, "gone"), proj, nil); ok {
		t.Error("a beads.dir that does not exist was found")
	}
}

// TestNoStoreSaysWhere: bd's "no beads database found" names no
// directory; runtasks' error says where the store was looked for.
func TestNoStoreSaysWhere(t *testing.T) {
	c, _ := fake(t, map[string]string{"ready.stderr": string(read(t, "nostore.stderr")), "ready.rc": "1"})
	c.WorkDir = t.TempDir()
	c.Env = append(c.Env, "BEADS_DIR=", "BEADS_DB=", "BD_DB=")
	_, err := c.Ready(context.Background(), "tx-1")
	if !beads.IsKind(err, beads.KindNoStore) || !strings.Contains(err.Error(), "runtasks looked for .beads in "+c.WorkDir+" and each directory above it") {
		t.Errorf("error %v: want where the store was looked for", err)
	}
}
