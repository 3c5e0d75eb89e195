package config

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultStateDir is state.dir's default, relative to the project root.
const DefaultStateDir = ".runtasks"

// OwnFiles drops from paths (as git status gives them) the ones runtasks
// made: under the state directory, claim.runs_dir and the task worktrees'
// directory (which git status shows as untracked). A directory that is
// the project root itself owns nothing.
func (c *Config) OwnFiles(paths []string) []string {
	root := c.Path(".")
	state, runs := cmp.Or(c.State.Dir, DefaultStateDir), cmp.Or(c.Claim.RunsDir, "runs")
	var own []string
	for _, d := range []string{state, runs, worktreesDir(c.Workflow.Worktrees.Pattern)} {
		if abs := c.Path(d); abs != "" && abs != root && !strings.HasPrefix(root, abs+string(filepath.Separator)) {
			own = append(own, abs)
		}
	}
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
		abs := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/")))
		return slices.ContainsFunc(own, func(d string) bool { return abs == d || strings.HasPrefix(abs, d+string(filepath.Separator)) })
	})
}

// worktreesDir is a worktree pattern's directory before its first
// placeholder ("" when none).
func worktreesDir(pattern string) string {
	before, _, _ := strings.Cut(pattern, "{")
	if !strings.ContainsAny(before, `/\`) {
		return ""
	}
	return filepath.Dir(filepath.FromSlash(before))
}
