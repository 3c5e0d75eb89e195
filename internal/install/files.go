package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maxSettings bounds what install reads of a settings file (an agent's
// file is not trusted to be small).
const maxSettings = 64 << 20

// atPoint is called at each step of a write; tests kill the process there
// (see TestKillAtEveryPoint).
var atPoint = func(string) {}

// resolve follows path's symlinks (a dangling link is written through too).
func resolve(path string) (string, error) {
	for range 40 {
		link, err := os.Readlink(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.EINVAL):
			return path, nil // missing, or not a link
		case err != nil:
			return "", err
		case !filepath.IsAbs(link):
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// readFile reads path, its symlinks followed, into a FileChange (before nil
// for a missing file): a regular file of at most maxSettings bytes.
func readFile(path string) (FileChange, error) {
	target, err := resolve(path)
	if err != nil {
		return FileChange{}, err
	}
	fc := FileChange{Path: path, target: target, perm: 0o644}
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fc, nil
	case err != nil:
		return fc, err
	case !fi.Mode().IsRegular():
		return fc, fmt.Errorf("%s is not a regular file", target)
	case fi.Size() > maxSettings:
		return fc, fmt.Errorf("%s is larger than %d MiB", target, maxSettings>>20)
	}
	fc.before, err = os.ReadFile(target)
	fc.after, fc.perm = fc.before, fi.Mode().Perm()
	return fc, err
}

// checkWritable refuses a file (or the directory it would go into) that
// the user made read-only: an atomic rename would replace it anyway.
func checkWritable(path string) error {
	fi, err := os.Stat(path)
	if err == nil {
		if fi.Mode().Perm()&0o222 == 0 {
			return fmt.Errorf("%s is read-only (mode %v)", path, fi.Mode().Perm())
		}
		if unix.Access(path, unix.W_OK) != nil {
			return fmt.Errorf("%s is not writable", path)
		}
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			if unix.Access(dir, unix.W_OK) != nil {
				return fmt.Errorf("directory %s is not writable", dir)
			}
			return nil
		}
		if dir == filepath.Dir(dir) {
			return err
		}
	}
}

// tempName is a write's one temporary file, removed by the next run.
func tempName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".runtasks-tmp")
}

// writeAtomic replaces path with data via a synced tempName.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp := tempName(path)
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	atPoint("written")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	atPoint("renamed")
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// backupPath is the one backup of a settings file, in the records' directory.
func (o Options) backupPath(path string) string {
	return filepath.Join(o.manifestDir(), "backups", digest([]byte(path))[:16]+"-"+filepath.Base(path)+".bak")
}
