package config

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultStateDir is the state directory, relative to the project root,
// when no configuration can say otherwise (state.dir's default).
const DefaultStateDir = ".runtasks"

// OwnFiles drops from paths (relative to the project root, as git status
// gives them) the ones runtasks made for itself: under the state directory,
// the runs folder (claim.runs_dir) and the task worktrees' directory (the
// part of workflow.worktrees.pattern before {id}, whose linked worktrees
// git status in the main work tree shows as untracked). A directory that
// is the project root itself (state.dir: ".") owns nothing; an unset
// state.dir or claim.runs_dir is its default.
func (c *Config) OwnFiles(paths []string) []string {
	root := c.rooted(".")
	state, runs := cmp.Or(c.State.Dir, DefaultStateDir), cmp.Or(c.Claim.RunsDir, "runs")
	var own []string
	for _, d := range []string{state, runs, worktreesDir(c.Workflow.Worktrees.Pattern)} {
		if d == "" {
			continue
		}
		if abs := c.rooted(d); abs != root && !strings.HasPrefix(root, abs+string(filepath.Separator)) {
			own = append(own, abs)
		}
	}
	out := paths[:0:0]
	for _, p := range paths {
		abs := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/")))
		if !slices.ContainsFunc(own, func(d string) bool { return abs == d || strings.HasPrefix(abs, d+string(filepath.Separator)) }) {
			out = append(out, p)
		}
	}
	return out
}

// worktreesDir is the directory part of a worktree pattern before its
// first placeholder ("" when there is none).
func worktreesDir(pattern string) string {
	before, _, _ := strings.Cut(pattern, "{")
	if !strings.ContainsAny(before, `/\`) {
		return ""
	}
	return filepath.Dir(filepath.FromSlash(before))
}
