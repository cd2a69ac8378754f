// Package testfs holds the folder helpers that tests of several packages
// share: what a folder holds, by name and by content.
package testfs

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Names is the sorted names of the entries of dir.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range es {
		ns = append(ns, e.Name())
	}
	sort.Strings(ns)
	return ns
}

// Tree is every entry of the folder tree at dir, by path relative to it,
// with its content; folders (dir itself as ".") map to "<dir>".
func Tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			m[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
