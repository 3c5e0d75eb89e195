package beads

import (
	"os"
	"path/filepath"

	"github.com/runtasks/runtasks/internal/config"
)

// storeVars are the variables with which bd is told its store.
var storeVars = []string{"BEADS_DIR", "BEADS_DB", "BD_DB"}

// FindStore finds the store bd would use for a Client without running bd:
// dir (beads.dir) when set, else the store a variable of env names
// (BEADS_DIR, BEADS_DB, BD_DB), else the first .beads directory from
// workDir upwards, as bd searches. ok is false when there is none; where
// then says where it looked, for a message.
func FindStore(dir, workDir string, env []string) (store, where string, ok bool) {
	if dir != "" {
		return dir, "beads.dir " + dir, isDir(dir)
	}
	for _, name := range storeVars {
		if v := config.LookupEnv(env, name); v != "" {
			return v, name + "=" + v, true
		}
	}
	if workDir == "" {
		workDir, _ = os.Getwd()
	}
	for d := workDir; ; {
		if p := filepath.Join(d, ".beads"); isDir(p) {
			return p, "", true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "looked for .beads in " + workDir + " and each directory above it; BEADS_DIR is unset", false
		}
		d = parent
	}
}

// where says where bd looks for the Client's store, for a "no beads
// database found": bd's message names no directory.
func (c *Client) where() string {
	store, where, ok := FindStore(c.Dir, c.WorkDir, c.env())
	switch {
	case !ok:
		return "runtasks " + where
	case where != "":
		return "bd was told " + where
	}
	return store + " holds no beads database (bd init creates one)"
}

func (c *Client) env() []string {
	if c.Env == nil {
		return os.Environ()
	}
	return c.Env
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
