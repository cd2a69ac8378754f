package resultdir

import "golang.org/x/sys/unix"

// exchange swaps the folders a and b in one step (renameat2 with
// RENAME_EXCHANGE), so that no moment exists at which neither is in
// place: a SIGKILL during a replacement leaves the previous results or
// the new ones, never neither. ok is false where the file system cannot
// exchange (EINVAL, ENOSYS): the caller then falls back to two renames.
func exchange(a, b string) (ok bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return false, nil
	}
	return err == nil, err
}
