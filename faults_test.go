package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// TestExportOverAFileKeepsItsMode: export -o over an existing tape (a
// 0600 one, say, kept private) used to leave it 0644.
func TestExportOverAFileKeepsItsMode(t *testing.T) {
	dir := t.TempDir()
	putSessions(t, dir, 1, func(int) (frame.Session, []frame.Frame) { return fakeSession("f", "p", time.Now()) })
	out := filepath.Join(t.TempDir(), "private.tape")
	os.WriteFile(out, []byte("old"), 0o600)
	if r := tapedeck(t, dir, nil, nil, "export", "-o", out, "last"); r.code != 0 {
		t.Fatalf("export -o: exit %d: %s", r.code, r.stderr)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("export -o over a 0600 file left it %v", fi.Mode().Perm())
	}
	fresh := filepath.Join(t.TempDir(), "new.tape")
	tapedeck(t, dir, nil, nil, "export", "-o", fresh, "last")
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new tape: %v, %v; want 0644", fi, err)
	}
}
