package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Gitignore is the .gitignore runtasks writes into the directories it owns,
// as pytest does for its cache, so its files never show in git status and
// never block a checkpoint's "commit your work first".
const Gitignore = "# Created by runtasks: its files are never committed.\n*\n"

// EnsureStateDir makes the state directory dir and, unless it has one or is
// a repository's root (state.dir: "."), its .gitignore.
func EnsureStateDir(dir string) error {
	if dir == "" {
		return errors.New("state directory not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return writeGitignore(dir)
}

// MkdirIgnored makes dir for runtasks' own files, with a .gitignore when
// runtasks creates it; an existing one may hold the user's files.
func MkdirIgnored(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeGitignore(dir)
}

// writeGitignore writes dir/.gitignore unless it exists or dir is a repository's root.
func writeGitignore(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err == nil {
		_, err = f.WriteString(Gitignore)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}

func (s *Store) mkdir(sub string) error {
	if err := EnsureStateDir(s.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}
