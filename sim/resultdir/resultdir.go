// Package resultdir writes a results folder atomically: every file goes
// into a temporary folder beside the destination, each file is synced, the
// folder is synced, and only then is it put in place: on Linux exchanged
// with the previous folder in one renameat2(RENAME_EXCHANGE), elsewhere
// (or where the file system cannot exchange) renamed into place after the
// previous folder is moved aside; the previous folder is removed after. A
// run that fails
// or is killed half-way leaves the previous results untouched and at worst a
// hidden ".<name>.tmp-*" folder, never a half-written results folder.
// Two writers of the same folder at once (two copies of the same batch
// job) both succeed, and the folder is whole: the last one's.
package resultdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File is one file of a results folder.
type File struct {
	Name string // a plain file name, no directories
	Data []byte
}

// Write replaces dir with a folder holding exactly files.
func Write(dir string, files []File) (err error) {
	dir = filepath.Clean(dir)
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	if base == "" || base == "." || base == ".." || base == string(filepath.Separator) {
		return fmt.Errorf("resultdir: %q cannot be a results folder", dir)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("resultdir: %s exists and is not a folder", dir)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("resultdir: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return fmt.Errorf("resultdir: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("resultdir: %w", err)
	}
	for _, f := range files {
		if f.Name == "" || strings.ContainsAny(f.Name, `/\`) {
			return fmt.Errorf("resultdir: bad file name %q", f.Name)
		}
		if err := writeSynced(filepath.Join(tmp, f.Name), f.Data); err != nil {
			return fmt.Errorf("resultdir: %w", err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("resultdir: %w", err)
	}
	for try := 0; ; try++ {
		err := put(tmp, dir, parent)
		// Another writer of the same folder (a second copy of the same
		// job) put its own in place between the check for a previous
		// folder and the rename: it is now the previous folder.
		if errors.Is(err, errAppeared) {
			if try == 0 {
				continue
			}
			return fmt.Errorf("resultdir: %s: other writers keep putting it in place", dir)
		}
		return err
	}
}

// errAppeared: dir was not there when put looked, and was when it renamed.
var errAppeared = errors.New("the folder appeared")

// testBeforeRename, when set (by tests), is called just before tmp is
// renamed to a dir that was not there.
var testBeforeRename func()

// put puts the folder tmp in place of dir.
func put(tmp, dir, parent string) error {
	var old string
	if _, err := os.Stat(dir); err == nil {
		// One step where the system can: tmp becomes dir and the previous
		// results move to tmp, to be removed once the parent is synced.
		ok, err := exchange(tmp, dir)
		if err != nil {
			return fmt.Errorf("resultdir: replacing the previous %s: %w", dir, err)
		}
		if ok {
			if err := syncDir(parent); err != nil {
				return fmt.Errorf("resultdir: %w", err)
			}
			if err := os.RemoveAll(tmp); err != nil {
				return fmt.Errorf("resultdir: removing the previous results %s: %w", tmp, err)
			}
			return nil
		}
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("resultdir: moving the previous %s aside: %w", dir, err)
		}
	}
	if old == "" && testBeforeRename != nil {
		testBeforeRename()
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old == "" && errors.Is(err, fs.ErrExist) {
			return errAppeared
		}
		if old != "" {
			if rerr := os.Rename(old, dir); rerr != nil {
				err = errors.Join(err, fmt.Errorf("restoring the previous results from %s: %w", old, rerr))
			}
		}
		return fmt.Errorf("resultdir: %w", err)
	}
	if err := syncDir(parent); err != nil {
		return fmt.Errorf("resultdir: %w", err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("resultdir: removing the previous results %s: %w", old, err)
		}
	}
	return nil
}

func writeSynced(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFile replaces one file atomically: a temporary file in the same
// folder, synced, then renamed over name.
func WriteFile(name string, data []byte) error {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-")
	if err != nil {
		return fmt.Errorf("resultdir: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("resultdir: %w", err)
	}
	return syncDir(dir)
}

// Replace moves the folder src to dst, replacing dst (moved aside first,
// removed after) if it exists.
func Replace(src, dst string) error {
	var old string
	if _, err := os.Stat(dst); err == nil {
		old = src + ".old"
		if err := os.Rename(dst, old); err != nil {
			return fmt.Errorf("resultdir: moving the previous %s aside: %w", dst, err)
		}
	}
	if err := os.Rename(src, dst); err != nil {
		if old != "" {
			os.Rename(old, dst)
		}
		return fmt.Errorf("resultdir: %w", err)
	}
	parent := filepath.Dir(dst)
	if err := syncDir(parent); err != nil {
		return fmt.Errorf("resultdir: %w", err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}
