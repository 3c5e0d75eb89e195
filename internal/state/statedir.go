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
	if err := mkdirIgnored(dir); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}

// MkdirIgnored makes dir for runtasks' own files, with a .gitignore when
// runtasks creates it; an existing one may hold the user's files.
func MkdirIgnored(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	return mkdirIgnored(dir)
}

// mkdirIgnored makes dir and its .gitignore, unless it has one or is a
// repository's root.
func mkdirIgnored(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	} else if err != nil {
		return err
	}
	_, err = f.WriteString(Gitignore)
	return errors.Join(err, f.Close())
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
