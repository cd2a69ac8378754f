//go:build unix

package live

import "syscall"

// openFileLimit is the process's soft limit on open files (RLIMIT_NOFILE;
// Go raises it to the hard limit at start on Linux), 0 if unknown.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}
