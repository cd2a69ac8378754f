package scenario

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim/dist"
)

// maxDataLines bounds an empirical distribution's file.
const maxDataLines = 10_000_000

// loadData reads the data files a scenario names (backend.service.file
// of dist: empirical or histogram), relative to the folder of the scenario file name.
// Problems inside a data file are reported at the data file's own line.
func (s *Scenario) loadData(name string, pos map[string]Pos) Errors {
	sv := &s.Backend.Service
	if (sv.Dist != ServiceEmpirical && sv.Dist != ServiceHistogram) || sv.File == "" {
		return nil
	}
	const path = "backend.service.file"
	fail := func(format string, a ...any) Errors {
		return Errors{&FieldError{File: name, Pos: pos[path], Path: path, Msg: fmt.Sprintf(format, a...)}}
	}
	if len(sv.File) > MaxFileLen {
		return fail("is %d characters long; at most %d", len(sv.File), MaxFileLen)
	}
	file := sv.File
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(name), file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fail("no such file %s (a path relative to the scenario file's folder)", file)
		}
		return fail("%v", err)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if sv.FileSHA256 != "" && !strings.EqualFold(sv.FileSHA256, hash) {
		return Errors{&FieldError{File: name, Pos: pos["backend.service.file_sha256"], Path: "backend.service.file_sha256",
			Msg: fmt.Sprintf("%s has SHA-256 %s, not %s: the data changed since this scenario was resolved", file, hash, sv.FileSHA256)}}
	}
	if sv.Dist == ServiceHistogram {
		if err := readHistogram(sv, data, file); err != nil {
			return fail("%v", err)
		}
		sv.FileSHA256 = hash
		return nil
	}
	e, errs := parseEmpirical(data, file)
	if len(errs) > 0 {
		return errs
	}
	sv.Empirical, sv.FileSHA256 = e, hash
	return nil
}

// parseEmpirical reads samples (one duration per line: 120ms) or a
// quantile table (a quantile and a duration per line: 0.99, 2s), separated
// by a comma or spaces; blank lines and # comments are skipped. Errors
// name file and line.
func parseEmpirical(data []byte, file string) (*dist.Empirical, Errors) {
	var (
		samples []int64
		qs      []float64
		vs      []int64
		shape   int // fields per line: 1 or 2, set by the first data line
		first   int // its line number
		errs    Errors
	)
	bad := func(line int, format string, a ...any) {
		if len(errs) < 20 {
			errs = append(errs, &FieldError{File: file, Pos: Pos{Line: line, Col: 1}, Msg: fmt.Sprintf(format, a...)})
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if len(samples)+len(qs) >= maxDataLines {
			bad(line, "more than %d data lines", maxDataLines)
			break
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if shape == 0 {
			shape, first = len(fields), line
			if shape != 1 && shape != 2 {
				bad(line, "expected a duration (a sample, e.g. 120ms) or a quantile and a duration (e.g. 0.99, 2s), got %q", text)
				return nil, errs
			}
		}
		if len(fields) != shape {
			what := map[int]string{1: "one duration (a sample)", 2: "a quantile and a duration"}[shape]
			bad(line, "expected %s, like line %d, got %q", what, first, text)
			continue
		}
		var d Duration
		if err := d.unmarshalScalar(fields[shape-1]); err != nil {
			bad(line, "%q: %v", fields[shape-1], err)
			continue
		}
		if d < 0 {
			bad(line, "a duration must be >= 0, got %s", d)
			continue
		}
		if shape == 1 {
			samples = append(samples, int64(d))
			continue
		}
		q, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || !(q >= 0 && q <= 1) {
			bad(line, "a quantile is a number in [0, 1], got %q", fields[0])
			continue
		}
		if n := len(qs); n > 0 && !(q > qs[n-1]) {
			bad(line, "quantiles must increase: %v after %v", q, qs[n-1])
			continue
		}
		if n := len(vs); n > 0 && int64(d) < vs[n-1] {
			bad(line, "durations must not decrease: %s after %s", d, Duration(vs[n-1]))
			continue
		}
		qs, vs = append(qs, q), append(vs, int64(d))
	}
	if err := sc.Err(); err != nil {
		bad(line+1, "%v", err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var (
		e   *dist.Empirical
		err error
	)
	switch shape {
	case 0:
		return nil, Errors{&FieldError{File: file, Msg: "no data: expected samples (one duration per line) or a quantile table (a quantile and a duration per line)"}}
	case 1:
		e, err = dist.FromSamples(samples)
	default:
		e, err = dist.FromQuantiles(qs, vs)
	}
	if err != nil {
		return nil, Errors{&FieldError{File: file, Pos: Pos{Line: first, Col: 1}, Msg: strings.TrimPrefix(err.Error(), "dist: ")}}
	}
	return e, nil
}
