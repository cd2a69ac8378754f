package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim"
)

// The exit code comes from the error's type (ExitCode, found with
// errors.As through any wrapping), never from its text: an untyped error
// that reads like a usage error or an interruption is a plain error.
func TestExitCodeFromErrorType(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"plain", errors.New("boom"), exitError},
		{"text of a usage error, no type", errors.New(`unknown command "x" for "throttlesim"`), exitError},
		{"text of an interruption, no type", errors.New("interrupted at 1.000s of 2.000s"), exitError},
		{"usage", usageError{errors.New("bad flag")}, exitUsage},
		{"wrapped usage", fmt.Errorf("run: %w", usageError{errors.New("bad flag")}), exitUsage},
		{"thresholds", fmt.Errorf("sweep: %w", thresholdsFailed{1, 2}), exitThresholds},
		{"reported", reportedError{exitMoreRounds}, exitMoreRounds},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), exitInterrupted},
		{"run interrupted", &sim.InterruptedError{At: 1e9, End: 2e9, Err: context.Canceled}, exitInterrupted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(nil, tt.err, io.Discard); got != tt.want {
				t.Errorf("got exit code %d, want %d", got, tt.want)
			}
		})
	}
}

// An interrupted run says where it stopped, from the error's fields.
func TestInterruptedSaysWhere(t *testing.T) {
	var b strings.Builder
	err := fmt.Errorf("sweep: %w", &sim.InterruptedError{At: 1807694e6, End: 7200e9, Err: context.Canceled})
	exitCode(nil, err, &b)
	if got, want := b.String(), "throttlesim: interrupted at 1807.694s of 7200.000s\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
