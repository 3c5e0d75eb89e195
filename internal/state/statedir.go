package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Gitignore is the .gitignore runtasks writes into the directories it
// owns (the state directory, a runs folder it creates), as pytest and ruff
// do for their caches: "*" ignores the directory's every file, the
// .gitignore included, so runtasks' own files never show in git status and
// never make a checkpoint's "commit your work first" impossible.
const Gitignore = "# Created by runtasks: its files are never committed.\n*\n"

// EnsureStateDir makes the state directory dir (and its parents) and, when
// it has no .gitignore, writes one (Gitignore). A directory that holds a
// .git entry (a repository's root, as with state.dir: ".") never gets one.
// It is the one place the state directory is created.
func EnsureStateDir(dir string) error {
	if dir == "" {
		return errors.New("state directory not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return writeGitignore(dir)
}

// MkdirIgnored makes dir (and its parents) for runtasks' own files; when
// runtasks creates it, a .gitignore (Gitignore) goes in it. A directory
// that already exists is left as it is: it may hold the user's files.
func MkdirIgnored(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeGitignore(dir)
}

// writeGitignore writes dir/.gitignore unless it exists (or dir is a
// repository's root). A concurrent writer's file is kept.
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
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}

// mkdir makes sub, a directory inside the state directory, after the
// state directory itself (EnsureStateDir).
func (s *Store) mkdir(sub string) error {
	if err := EnsureStateDir(s.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}
