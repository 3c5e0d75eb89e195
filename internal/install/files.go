package install

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxSettings bounds what install reads of a settings file (an agent's
// file is not trusted to be small).
const maxSettings = 64 << 20

// atPoint is called at each step of a write; tests kill the process there
// (see TestKillAtEveryPoint).
var atPoint = func(string) {}

// resolve follows path's symlinks to the file that holds the content
// (which may not exist yet: a dangling link is written through too).
func resolve(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// readRegular reads a regular file, at most maxSettings bytes (nil for a
// missing file).
func readRegular(path string) ([]byte, fs.FileMode, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err != nil {
		return nil, 0, err
	}
	if len(b) > maxSettings {
		return nil, 0, fmt.Errorf("%s is larger than %d MiB", path, maxSettings>>20)
	}
	if b == nil {
		b = []byte{}
	}
	return b, fi.Mode().Perm(), nil
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
	dir := filepath.Dir(path)
	for {
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
		parent := filepath.Dir(dir)
		if parent == dir {
			return err
		}
		dir = parent
	}
}

// tempName is the one name a write ever gives its temporary file: a kill
// can leave at most this file, and the next run removes it.
func tempName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".runtasks-tmp")
}

// writeAtomic replaces path with data. The data goes into an unnamed file
// (O_TMPFILE) in path's directory, is synced, linked under tempName and
// renamed over path: a kill before the link leaves nothing behind, one
// between link and rename leaves tempName, which the next write of the
// same file (and every install or uninstall) removes. Where O_TMPFILE is
// not supported the data is written to tempName directly.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp := tempName(path)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(dir, os.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, perm)
	named := false
	if err != nil {
		f, err = os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		named = true
		if err != nil {
			return err
		}
	}
	fail := func(err error) error {
		f.Close()
		if named {
			os.Remove(tmp)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	atPoint("written")
	if !named {
		proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
		if err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW); err != nil {
			return fail(err)
		}
		named = true
	}
	atPoint("linked")
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	atPoint("renamed")
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// backupPath is the one backup install keeps of a settings file: next to
// the path the agent reads (the link, for a symlinked file), the newest
// replacing the one before.
func backupPath(path string) string { return path + ".runtasks.bak" }

// removeTemp removes a temporary file a killed run left next to path.
func removeTemp(path string) {
	os.Remove(tempName(path))
}
