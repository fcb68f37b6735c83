package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

func ids(list []frame.Session) string {
	var s []string
	for _, m := range list {
		s = append(s, m.Name)
	}
	return strings.Join(s, ",")
}

func TestRmOlderThan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now()
	ages := []time.Duration{10 * 24 * time.Hour, 8 * 24 * time.Hour, 2 * 24 * time.Hour, time.Minute}
	putSessions(t, dir, len(ages), func(i int) (frame.Session, []frame.Frame) {
		return fakeSession(fmt.Sprintf("age%d", i), "p", now.Add(-ages[i]))
	})
	s := startShim(t, dir, "echo") // a live session is never removed
	io.WriteString(s.stdin, "{}\n")
	s.readLine(t)

	r := tapedeck(t, dir, nil, nil, "rm", "--older-than", "7d", "--dry-run")
	if r.code != 0 || strings.Count(string(r.stdout), "would remove") != 2 || len(lsJSON(t, dir)) != 5 {
		t.Fatalf("--dry-run: exit %d, %q", r.code, r.stdout)
	}
	r = tapedeck(t, dir, nil, nil, "rm", "--older-than", "7d")
	if r.code != 0 || !strings.Contains(string(r.stdout), "(age0)") || !strings.Contains(string(r.stdout), "(age1)") {
		t.Fatalf("rm --older-than 7d: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if got := ids(lsJSON(t, dir)); got != ",age3,age2" {
		t.Errorf("after rm --older-than 7d: %q", got)
	}
	r = tapedeck(t, dir, nil, nil, "rm", "--older-than", "0s")
	if got := ids(lsJSON(t, dir)); r.code != 0 || got != "" {
		t.Errorf("rm --older-than 0s left %q (exit %d, %s)", got, r.code, r.stderr)
	}
	if list := lsJSON(t, dir); len(list) != 1 || list[0].Status != frame.StatusRecording {
		t.Fatalf("the live session: %+v", list)
	}
	r = tapedeck(t, dir, nil, nil, "rm", "last")
	if r.code != 1 || !strings.Contains(string(r.stderr), "is recording; stop its plugin first") {
		t.Errorf("rm of a live session: exit %d, %s", r.code, r.stderr)
	}
	r = tapedeck(t, dir, nil, nil, "gc")
	if r.code != 1 || !strings.Contains(string(r.stderr), "session is recording") {
		t.Errorf("gc while recording: exit %d, %s", r.code, r.stderr)
	}
	s.stdin.Close()
	if code := s.wait(t); code != 0 {
		t.Fatalf("shim exit %d", code)
	}
	if list := lsJSON(t, dir); len(list) != 1 || list[0].Status != frame.StatusComplete || list[0].Frames.In != 1 {
		t.Errorf("the session recorded during rm and gc: %+v", list)
	}
}

func TestGCCompacts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := bytes.Repeat([]byte("x"), 64<<10)
	putSessions(t, dir, 20, func(i int) (frame.Session, []frame.Frame) {
		m, f := fakeSession(fmt.Sprintf("s%d", i), "p", time.Now().Add(time.Duration(i)*time.Second))
		for j := range 10 {
			f = append(f[:len(f)-1], frame.Frame{Seq: uint64(10 + j), At: 5000, Dir: frame.Out, Raw: big}, f[len(f)-1])
			f[len(f)-1].Seq = uint64(100)
		}
		return m, f
	})
	keep := tapedeck(t, dir, nil, nil, "export", "s19")
	db := filepath.Join(dir, "tapedeck.db")
	fi, _ := os.Stat(db)
	before := fi.Size()
	var refs []string
	for i := range 19 {
		refs = append(refs, fmt.Sprintf("s%d", i))
	}
	if r := tapedeck(t, dir, nil, nil, append([]string{"rm", "--compact"}, refs...)...); r.code != 0 || !strings.Contains(string(r.stdout), "compacted ") {
		t.Fatalf("rm --compact: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
	fi, _ = os.Stat(db)
	if fi.Size() > before/4 {
		t.Errorf("the database is %d bytes after gc, was %d", fi.Size(), before)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v after gc, want 0600", fi.Mode().Perm())
	}
	checkDB(t, dir)
	if again := tapedeck(t, dir, nil, nil, "export", "s19"); !bytes.Equal(again.stdout, keep.stdout) {
		t.Error("the session kept reads differently after gc")
	}
	if r := tapedeck(t, dir, nil, nil, "gc"); r.code != 0 {
		t.Errorf("gc of a compact store: %d %s", r.code, r.stderr)
	}
	if r := tapedeck(t, t.TempDir(), nil, nil, "gc"); r.code != 0 {
		t.Errorf("gc of an empty store: %d %s", r.code, r.stderr)
	}
}
