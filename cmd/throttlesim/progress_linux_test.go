package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal whose window size nobody set (0x0, as
// under docker run -t or script): the terminal side and the side that
// reads what is written to it.
func openPTY(t *testing.T) (tty, reader *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, m
}

// In a real terminal of 0 columns the bar keeps a width: it was drawn
// full width, measured as 0, and collapsed to "||".
func TestProgressInAZeroSizeTerminal(t *testing.T) {
	tty, reader := openPTY(t)
	if cols := terminalColumns(tty); cols != 0 {
		t.Skipf("the pseudo-terminal has %d columns, not 0", cols)
	}
	var seen bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&seen, reader) // until the terminal side is closed
		close(copied)
	}()
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	var stdout bytes.Buffer
	code := run(context.Background(), []string{"sweep", file, "--vary", "clients.throttle.k=1.5,3", "--seeds", "1", "--jobs", "1",
		"--out", filepath.Join(dir, "sw")}, &stdout, tty, true)
	tty.Close()
	<-copied
	if code != 0 {
		t.Fatalf("sweep: exit %d: %q", code, seen.String())
	}
	bar := regexp.MustCompile(`\|([^|]*)\| \(0/2\)`).FindStringSubmatch(seen.String())
	if bar == nil {
		t.Fatalf("no bar at 0/2 drawn on the terminal: %q", seen.String())
	}
	if _, width := barLayout(0, "sweeping tiny (2 points x 1 seeds)"); len(bar[1]) != width || width < 10 {
		t.Errorf("the bar is %d cells wide, want %d (laid out for 80 columns): %q", len(bar[1]), width, bar[0])
	}
}
