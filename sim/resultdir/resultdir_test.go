package resultdir

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

// noLeftovers fails if parent holds anything but the names in want.
func noLeftovers(t *testing.T, parent string, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := testfs.Names(t, parent); !reflect.DeepEqual(got, want) {
		t.Errorf("entries of %s: got %q, want %q (no temporary folders left behind)", parent, got, want)
	}
}

func TestWrite(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	files := []File{
		{Name: "timeseries.csv", Data: []byte("t_s,x\n0,1\n")},
		{Name: "empty.txt", Data: nil},
		{Name: "summary.json", Data: []byte(`{"a":1}`)},
	}
	if err := Write(dir, files); err != nil {
		t.Fatalf("Write: got error %v, want nil", err)
	}
	want := map[string]string{".": "<dir>", "timeseries.csv": "t_s,x\n0,1\n", "empty.txt": "", "summary.json": `{"a":1}`}
	if got := testfs.Tree(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("folder content: got %q, want %q", got, want)
	}
	noLeftovers(t, parent, "out")
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o755 {
			t.Errorf("folder mode: got %v, want %v", got, os.FileMode(0o755))
		}
	}
}

func TestWriteCreatesParents(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "b", "out")
	if err := Write(dir, []File{{Name: "x", Data: []byte("1")}}); err != nil {
		t.Fatalf("Write: got error %v, want nil", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x")); err != nil || string(b) != "1" {
		t.Errorf("out/x: got %q, %v, want \"1\"", b, err)
	}
}

func TestWriteNoFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, nil); err != nil {
		t.Fatalf("Write: got error %v, want nil", err)
	}
	if got := testfs.Names(t, dir); len(got) != 0 {
		t.Errorf("folder content: got %q, want empty", got)
	}
}

func TestWriteReplaces(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	old := []File{
		{Name: "timeseries.csv", Data: []byte("old")},
		{Name: "extra.png", Data: []byte("old extra")},
	}
	if err := Write(dir, old); err != nil {
		t.Fatal(err)
	}
	// A file and a sub-folder added by hand are gone too.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, []File{{Name: "timeseries.csv", Data: []byte("new")}}); err != nil {
		t.Fatalf("Write over an existing folder: got error %v, want nil", err)
	}
	want := map[string]string{".": "<dir>", "timeseries.csv": "new"}
	if got := testfs.Tree(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("folder content: got %q, want %q", got, want)
	}
	noLeftovers(t, parent, "out")
}

func TestWriteFailureKeepsPrevious(t *testing.T) {
	tests := []struct {
		name  string
		files []File
		msg   string
	}{
		{"empty name", []File{{Name: "a", Data: []byte("1")}, {Name: ""}}, "bad file name"},
		{"slash", []File{{Name: "a", Data: []byte("1")}, {Name: "sub/b"}}, `bad file name "sub/b"`},
		{"backslash", []File{{Name: `sub\b`}}, "bad file name"},
		{"parent", []File{{Name: "../escape"}}, "bad file name"},
		{"dot", []File{{Name: "a", Data: []byte("1")}, {Name: "."}}, "resultdir"},
		{"dot dot", []File{{Name: ".."}}, "resultdir"},
		{"duplicate", []File{{Name: "a", Data: []byte("1")}, {Name: "a", Data: []byte("2")}}, "resultdir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			if err := Write(dir, []File{{Name: "timeseries.csv", Data: []byte("previous")}, {Name: "summary.json", Data: []byte("{}")}}); err != nil {
				t.Fatal(err)
			}
			before := testfs.Tree(t, dir)
			err := Write(dir, tc.files)
			if err == nil {
				t.Fatalf("Write(%q): got nil, want an error", tc.files)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error: got %q, want it to contain %q", err, tc.msg)
			}
			if after := testfs.Tree(t, dir); !reflect.DeepEqual(after, before) {
				t.Errorf("previous folder after a failed Write: got %q, want it unchanged %q", after, before)
			}
			noLeftovers(t, parent, "out")
		})
	}
}

func TestWriteFailureWithoutPrevious(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := Write(dir, []File{{Name: "a/b"}}); err == nil {
		t.Fatal("Write: got nil, want an error")
	}
	noLeftovers(t, parent)
}

// Two writers of the same new folder at once (two copies of the same
// batch job): the other one puts its folder in place after this one
// found none and before it renames its own. This one's rename then
// treats the other's as the previous folder instead of failing: both
// succeed, and the folder is whole (the last writer's).
func TestWriteWhenAnotherWriterGetsThereFirst(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	var otherErr error
	testBeforeRename = func() {
		testBeforeRename = nil
		otherErr = Write(dir, []File{{Name: "a", Data: []byte("theirs")}, {Name: "b", Data: []byte("theirs")}})
	}
	t.Cleanup(func() { testBeforeRename = nil })
	if err := Write(dir, []File{{Name: "a", Data: []byte("ours")}}); err != nil || otherErr != nil {
		t.Fatalf("Write: %v; the other writer: %v", err, otherErr)
	}
	if got := testfs.Tree(t, dir); !reflect.DeepEqual(got, map[string]string{".": "<dir>", "a": "ours"}) {
		t.Errorf("folder: got %v, want only this writer's a", got)
	}
	noLeftovers(t, parent, "out")
}

func TestWriteRefusesAFile(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := os.WriteFile(dir, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(dir, []File{{Name: "x", Data: []byte("1")}})
	if err == nil {
		t.Fatal("Write over a file: got nil, want an error")
	}
	if !strings.Contains(err.Error(), "exists and is not a folder") {
		t.Errorf("error: got %q, want it to say the path is not a folder", err)
	}
	if b, err := os.ReadFile(dir); err != nil || !bytes.Equal(b, []byte("precious")) {
		t.Errorf("the file after Write: got %q, %v, want it unchanged", b, err)
	}
	noLeftovers(t, parent, "out")
}

func TestWriteRefusesBadFolderNames(t *testing.T) {
	for _, dir := range []string{".", "..", string(filepath.Separator), ""} {
		t.Run(dir, func(t *testing.T) {
			err := Write(dir, []File{{Name: "x"}})
			if err == nil {
				t.Fatalf("Write(%q): got nil, want an error", dir)
			}
			if !strings.Contains(err.Error(), "cannot be a results folder") {
				t.Errorf("Write(%q): got %q, want \"cannot be a results folder\"", dir, err)
			}
		})
	}
}

// TestWriteRelative: a bare folder name is a folder in the working
// directory.
func TestWriteRelative(t *testing.T) {
	parent := t.TempDir()
	t.Chdir(parent)
	if err := Write("out", []File{{Name: "x", Data: []byte("1")}}); err != nil {
		t.Fatalf("Write: got error %v, want nil", err)
	}
	if b, err := os.ReadFile(filepath.Join(parent, "out", "x")); err != nil || string(b) != "1" {
		t.Errorf("out/x: got %q, %v, want \"1\"", b, err)
	}
	noLeftovers(t, parent, "out")
}
