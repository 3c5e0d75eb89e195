package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/runtasks/runtasks/internal/trust"
)

const (
	ProjectFile = "project.yaml"
	// EnvConfig names the variable that selects the project.yaml to read.
	EnvConfig = "RUNTASKS_CONFIG"
	// EnvProjectDir is set by Claude Code, in its hooks' environment, to
	// the directory the session was started in.
	EnvProjectDir = "CLAUDE_PROJECT_DIR"
)

// FindProject finds the project root and its project.yaml ("" when none).
// StartDir ("" = the working directory) must be a directory: a hook whose
// cwd is gone gets an error, never another project. An explicit file
// (ConfigFile, else RUNTASKS_CONFIG) must exist, and its directory is the
// root. Else, from CLAUDE_PROJECT_DIR (when a directory) or StartDir, the
// root is the git repository's main work tree (every linked worktree
// shares its project.yaml, state, trust and run folders), else
// CLAUDE_PROJECT_DIR, else the first directory upwards that holds
// project.yaml, .beads or .git, else StartDir.
func FindProject(opts LoadOptions) (root, path string, err error) {
	start, err := filepath.Abs(opts.StartDir) // "": the working directory
	if err == nil {
		err = cfgDir(start)
	}
	if err != nil {
		return "", "", fmt.Errorf("find project: %w", err)
	}

	explicit, how := opts.ConfigFile, "--config"
	if explicit == "" {
		explicit, how = LookupEnv(opts.Environ, EnvConfig), "env "+EnvConfig
	}
	if explicit != "" {
		if !filepath.IsAbs(explicit) {
			explicit = filepath.Join(start, explicit)
		}
		if err := cfgRegularFile(explicit); err != nil {
			return "", "", fmt.Errorf("configuration file (%s): %w", how, err)
		}
		return filepath.Dir(explicit), explicit, nil
	}

	fixed := false // the root is the start itself when no repository holds it
	if d := LookupEnv(opts.Environ, EnvProjectDir); filepath.IsAbs(d) && cfgDir(d) == nil {
		start, fixed = filepath.Clean(d), true
	}
	if opts.MainWorktree != nil {
		if main, ok, err := opts.MainWorktree(start); err != nil {
			return "", "", fmt.Errorf("find project: %w", err)
		} else if ok {
			return cfgProjectAt(main)
		}
	}
	if fixed {
		return cfgProjectAt(start)
	}
	for dir := start; ; {
		if _, err := os.Stat(filepath.Join(dir, ProjectFile)); err == nil {
			return cfgProjectAt(dir)
		}
		for _, marker := range []string{".beads", ".git"} {
			if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
				return dir, "", nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return start, "", nil
		}
		dir = parent
	}
}

// cfgProjectAt is the project rooted at dir, with its project.yaml (a
// regular file) if it has one.
func cfgProjectAt(dir string) (root, path string, err error) {
	candidate := filepath.Join(dir, ProjectFile)
	if _, err := os.Lstat(candidate); err != nil {
		return dir, "", nil
	}
	if err := cfgRegularFile(candidate); err != nil {
		return "", "", fmt.Errorf("configuration file: %w", err)
	}
	return dir, candidate, nil
}

func cfgDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

func cfgRegularFile(path string) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	return err
}

// LookupEnv gives the last value of key in env; "" when unset.
func LookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if name, val, ok := strings.Cut(env[i], "="); ok && name == key {
			return val
		}
	}
	return ""
}

// UntrustedFile is a project.yaml Load left out for want of trust.
type UntrustedFile struct {
	Root, Path string
	State      trust.State // trust.Untrusted or trust.Changed
	Err        string      // a trust store that could not be read
}

// Message tells the person which file was left out, why, and how to trust it.
func (u *UntrustedFile) Message() string {
	why := "is not trusted"
	if u.State == trust.Changed {
		why = "changed since it was trusted"
	}
	if u.Err != "" {
		why += " (" + u.Err + ")"
	}
	return fmt.Sprintf("%s %s, so runtasks ignores it here (defaults, environment and flags only). Review it, then run `runtasks trust %s`.",
		u.Path, why, ShellQuote(u.Root))
}

// ShellQuote quotes s for a POSIX shell when it needs quoting.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@,%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cfgTrust is nil when the project.yaml at path may be read (no trust
// required, named explicitly, or trusted as it is); else what was left out.
func cfgTrust(opts LoadOptions, root, path string, content []byte) *UntrustedFile {
	if opts.RequireTrust == nil || opts.ConfigFile != "" || LookupEnv(opts.Environ, EnvConfig) != "" {
		return nil
	}
	st, err := opts.RequireTrust(root, content)
	if err == nil && st == trust.Trusted {
		return nil
	}
	u := &UntrustedFile{Root: root, Path: path, State: st}
	if err != nil {
		u.Err = err.Error()
	}
	return u
}
