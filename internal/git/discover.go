package git

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// discoverEnv are the variables that change how git finds a repository:
// with any of them set, only git itself can say.
var discoverEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
	"GIT_DISCOVERY_ACROSS_FILESYSTEM"}

// mainWorktreeFromFiles answers MainWorktree from the repository's files
// for git's plain layouts, without a git process: going up from dir, a .git
// directory is a main work tree, a .git file names a linked worktree's
// (whose commondir leads to the main one) or a submodule's git directory.
// known is false wherever git might answer otherwise (discoverEnv set, a
// bare or foreign-owned repository, core.worktree or core.bare set, a file
// system boundary, anything unreadable), and git is asked.
func mainWorktreeFromFiles(dir string) (root string, ok, known bool) {
	for _, v := range discoverEnv {
		if _, set := os.LookupEnv(v); set {
			return "", false, false
		}
	}
	d, err := filepath.EvalSymlinks(dir) // git answers physical paths
	if err != nil || !filepath.IsAbs(d) {
		return "", false, false
	}
	dev, ok := device(d)
	if !ok {
		return "", false, false
	}
	for {
		if filepath.Base(d) == ".git" || isGitDir(d) {
			return "", false, false // inside a git directory, or a bare repository
		}
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil:
			return fromDotGit(d, dotgit, fi)
		case !errors.Is(err, fs.ErrNotExist):
			return "", false, false
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false, true // in no repository
		}
		if pdev, ok := device(parent); !ok || pdev != dev {
			return "", false, false // git stops at a file system's boundary
		}
		d = parent
	}
}

// fromDotGit is the main work tree for the work tree top with .git dotgit.
func fromDotGit(top, dotgit string, fi fs.FileInfo) (root string, ok, known bool) {
	gitdir, common := dotgit, dotgit
	switch {
	case fi.IsDir():
		if _, err := os.Lstat(filepath.Join(dotgit, "commondir")); !errors.Is(err, fs.ErrNotExist) {
			return "", false, false // a .git directory that shares another's: git knows
		}
	case fi.Mode().IsRegular():
		var err error
		if gitdir, err = pathIn(dotgit, "gitdir: ", top); err != nil {
			return "", false, false
		}
		common = gitdir
		if c, err := pathIn(filepath.Join(gitdir, "commondir"), "", gitdir); err == nil {
			common = c
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", false, false
		}
	default:
		return "", false, false
	}
	for _, d := range []string{top, dotgit, gitdir, common} {
		// git's safe.directory refuses another user's directories and .git.
		if dfi, err := os.Stat(d); err != nil || !ownedByUs(dfi) {
			return "", false, false
		}
	}
	if !isGitDir(gitdir) || !isGitDir(common) || !plainConfig(filepath.Join(common, "config"), gitdir, top) ||
		(gitdir != common && !plainConfig(filepath.Join(gitdir, "config.worktree"), gitdir, top)) {
		return "", false, false
	}
	if m, err := filepath.EvalSymlinks(mainOf(common, top)); err == nil {
		return m, true, true
	}
	return "", false, false
}

// isGitDir is git's test of a git directory, in short: a HEAD, and objects
// and refs (or a commondir naming the directory that holds them).
func isGitDir(d string) bool {
	if fi, err := os.Stat(filepath.Join(d, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if _, err := os.Stat(filepath.Join(d, "commondir")); err == nil {
		return true
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// plainConfig reports whether a git config file (missing is fine) leaves
// the work tree at top: core.bare is not true, and core.worktree, if set,
// names top. A line that might say otherwise says no.
func plainConfig(path, gitdir, top string) bool {
	data, err := agentfile.Read(path, maxGitFile)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "[") {
			if _, rest, ok := strings.Cut(l, "]"); ok {
				line = rest // a section header with a key on its line: [core] bare = true
			}
		}
		key, value, _ := strings.Cut(line, "=")
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch {
		case strings.HasPrefix(key, "bare"):
			if key != "bare" || strings.ToLower(value) != "false" {
				return false
			}
		case strings.HasPrefix(key, "worktree"):
			if key != "worktree" || value == "" || strings.ContainsAny(value, "\"'\\") {
				return false
			}
			if !filepath.IsAbs(value) {
				value = filepath.Join(gitdir, value)
			}
			if w, err := filepath.EvalSymlinks(value); err != nil || w != top {
				return false
			}
		}
	}
	return true
}

// maxGitFile bounds the git files read here; a larger one is an error.
const maxGitFile = 64 << 10

// pathIn reads the one path a small git file holds after prefix (.git's
// "gitdir: …", commondir), relative to base.
func pathIn(file, prefix, base string) (string, error) {
	data, err := agentfile.Read(file, maxGitFile)
	if err != nil {
		return "", err
	}
	p, found := strings.CutPrefix(strings.TrimSpace(string(data)), prefix)
	if !found || p == "" || strings.ContainsAny(p, "\n\r") {
		return "", errors.New(file + ": not a path")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
}

// device is the file system a directory is on.
func device(d string) (uint64, bool) {
	var st syscall.Stat_t
	if syscall.Stat(d, &st) != nil {
		return 0, false
	}
	return uint64(st.Dev), true
}

// ownedByUs reports whether the current user owns fi (git's safe.directory).
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
