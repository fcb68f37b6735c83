package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeNamesEveryFuzzTarget: the README's list of fuzz targets names
// each one .ci/run fuzzes, as package.Target, and no other.
func TestReadmeNamesEveryFuzzTarget(t *testing.T) {
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(readme), "\nFuzz targets, one per parser")
	if !ok {
		t.Fatal("docs/development.md has no list of fuzz targets")
	}
	list, _, _ = strings.Cut(list, "For example:")
	want := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^fuzz \./(\S+) (Fuzz\w+) `).FindAllStringSubmatch(string(ci), -1) {
		want[m[1]+"."+m[2]] = true
	}
	if len(want) < 10 {
		t.Fatalf(".ci/run fuzzes %d targets?", len(want))
	}
	got := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z/]+\\.Fuzz\\w+)`").FindAllStringSubmatch(list, -1) {
		got[m[1]] = true
	}
	for name := range want {
		if !got[name] {
			t.Errorf("docs/development.md's list lacks %s, which .ci/run fuzzes", name)
		}
	}
	for name := range got {
		if !want[name] {
			t.Errorf("docs/development.md lists %s, which .ci/run does not fuzz", name)
		}
	}
}
