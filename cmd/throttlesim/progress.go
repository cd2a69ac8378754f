package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// defaultColumns is the width a progress bar is laid out for when the
// terminal's cannot be read.
const defaultColumns = 80

// terminalColumns is the width of the terminal w writes to, 0 if unknown.
func terminalColumns(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

// barLayout says how wide a bar with description desc is drawn in a
// terminal of cols columns: full width (measured again at every redraw,
// so it follows a resize) when the terminal has a width, else a fixed bar
// that fits a line of 80. A terminal with no size set (a pseudo-terminal
// whose window size nobody set: docker run -t, script, some CI runners)
// reports 0 columns without an error, and a full-width bar then
// collapsed to nothing.
func barLayout(cols int, desc string) (full bool, width int) {
	if cols > 0 {
		return true, 0
	}
	// What the line holds besides the bar: the description, " 100% |",
	// "| ", the count "(123/456) " and the times "[1m2s:3m4s]".
	const rest = 7 + 2 + 12 + 14
	return false, max(10, defaultColumns-len([]rune(desc))-rest)
}

// progressBar is a progress bar on w of max steps, laid out for w's terminal.
func progressBar(w io.Writer, max int64, desc string, count bool) *progressbar.ProgressBar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true), // drawn at once, before the first step
	}
	if full, width := barLayout(terminalColumns(w), desc); full {
		opts = append(opts, progressbar.OptionFullWidth())
	} else {
		opts = append(opts, progressbar.OptionSetWidth(width))
	}
	if count {
		opts = append(opts, progressbar.OptionShowCount())
	} else {
		opts = append(opts, progressbar.OptionShowElapsedTimeOnFinish())
	}
	return progressbar.NewOptions64(max, opts...)
}

// endBar ends a bar: done, it is cleared as it finishes; stopped (an
// error, Ctrl-C), its line is cleared and it draws no more, so that the
// message that follows starts a clean line instead of running on after
// the bar.
func endBar(bar *progressbar.ProgressBar, done bool) {
	if bar == nil {
		return
	}
	if done {
		bar.Finish()
		return
	}
	bar.Clear()
	bar.Exit()
}
