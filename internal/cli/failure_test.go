package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// mountTmpfs mounts a tmpfs of size at dir, or skips the test saying why.
// Its root is 0700 (a tmpfs's is 1777 unless told): a store refuses a
// folder that others can write.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

func someLines(n, pad int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"m","params":{"i":%d,"pad":"%s"}}`+"\n", i, strings.Repeat("z", pad))
	}
	return b.Bytes()
}

// oneLine checks that tapedeck wrote exactly one line of its own to stderr.
func oneLine(t *testing.T, stderr []byte, want string) {
	t.Helper()
	got := strings.Split(strings.TrimRight(string(stderr), "\n"), "\n")
	if len(got) != 1 || !strings.Contains(got[0], want) {
		t.Errorf("stderr %q: want one line containing %q", stderr, want)
	}
}

func TestRecordingFailureNeverHurtsThePlugin(t *testing.T) {
	t.Parallel()
	input := someLines(500, 100)
	t.Run("store under a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, nil, 0o600)
		r := recordFixture(t, filepath.Join(file, "store"), "echo", input, "FIXTURE_CODE=0")
		if r.code != 0 || !bytes.Equal(r.stdout, input) {
			t.Fatalf("exit %d, %d of %d bytes", r.code, len(r.stdout), len(input))
		}
		oneLine(t, r.stderr, "not a directory")
	})
	t.Run("read-only store folder", func(t *testing.T) {
		dir := t.TempDir()
		mountTmpfs(t, dir, "4m")
		os.MkdirAll(filepath.Join(dir, "store", "spool"), 0o700)
		if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot remount read-only: %v %s", err, out)
		}
		r := recordFixture(t, filepath.Join(dir, "store"), "echo", input)
		if r.code != 0 || !bytes.Equal(r.stdout, input) {
			t.Fatalf("exit %d, %d of %d bytes", r.code, len(r.stdout), len(input))
		}
		oneLine(t, r.stderr, "read-only file system")
	})
	t.Run("full disk", func(t *testing.T) {
		store := t.TempDir()
		os.MkdirAll(filepath.Join(store, "spool"), 0o700)
		mountTmpfs(t, filepath.Join(store, "spool"), "256k")
		big := someLines(4000, 200) // ≈ 1 MB: the spool fills up on the way
		r := recordFixture(t, store, "echo", big)
		if r.code != 0 || !bytes.Equal(r.stdout, big) {
			t.Fatalf("exit %d, %d of %d bytes", r.code, len(r.stdout), len(big))
		}
		oneLine(t, r.stderr, "no space left on device")
		list := lsJSON(t, store)
		if len(list) != 1 {
			t.Fatalf("%d sessions, want 1", len(list))
		}
		s := list[0]
		if s.Lost == nil || s.Lost.Frames == 0 || !strings.Contains(s.Lost.Reason, "no space") {
			t.Fatalf("session does not say what was lost: %+v", s.Lost)
		}
		if s.Frames.In+s.Frames.Out+s.Lost.Frames < 8000 {
			t.Errorf("stored %d+%d and lost %d frames of 8000", s.Frames.In, s.Frames.Out, s.Lost.Frames)
		}
		if s.Status != frame.StatusComplete || s.Exit.Code == nil || *s.Exit.Code != 0 {
			t.Errorf("status %s exit %+v", s.Status, s.Exit)
		}
	})
	t.Run("full disk under the whole store", func(t *testing.T) {
		// The spool fills the disk, so the database cannot take the session
		// either: one line, naming the session (never a temporary file),
		// and the next command with room stores what was recorded.
		store := t.TempDir()
		mountTmpfs(t, store, "256k")
		big := someLines(4000, 200)
		r := recordFixture(t, store, "echo", big)
		if r.code != 0 || !bytes.Equal(r.stdout, big) {
			t.Fatalf("exit %d, %d of %d bytes", r.code, len(r.stdout), len(big))
		}
		spools, _ := filepath.Glob(filepath.Join(store, "spool", "*.spool"))
		if len(spools) != 1 {
			t.Fatalf("spools %v", spools)
		}
		id := strings.TrimSuffix(filepath.Base(spools[0]), ".spool")
		oneLine(t, r.stderr, "session "+id)
		if strings.Contains(string(r.stderr), ".tmp-") {
			t.Errorf("stderr names a temporary file: %s", r.stderr)
		}
		if out, err := exec.Command("mount", "-o", "remount,size=8m", store).CombinedOutput(); err != nil {
			t.Skipf("cannot grow the tmpfs: %v %s", err, out)
		}
		os.Remove(filepath.Join(store, "tapedeck.db")) // what bbolt began on the full disk
		list := lsJSON(t, store)
		if len(list) != 1 || list[0].ID != id || list[0].Lost == nil || list[0].Lost.Frames == 0 {
			t.Fatalf("after making room: %+v", list)
		}
	})
	t.Run("damaged database", func(t *testing.T) {
		store := t.TempDir()
		garbage := bytes.Repeat([]byte("not a bbolt file "), 1000)
		os.WriteFile(filepath.Join(store, "tapedeck.db"), garbage, 0o600)
		r := recordFixture(t, store, "exit", input, "FIXTURE_CODE=6")
		if r.code != 6 {
			t.Fatalf("exit %d, want 6", r.code)
		}
		oneLine(t, r.stderr, "damaged")
		if got, _ := os.ReadFile(filepath.Join(store, "tapedeck.db")); !bytes.Equal(got, garbage) {
			t.Error("the damaged database was modified")
		}
		spools, _ := filepath.Glob(filepath.Join(store, "spool", "*.spool"))
		if len(spools) != 1 {
			t.Fatalf("spools %v: the session's frames must stay in its spool", spools)
		}
		// Moving the damaged file aside lets the next command take the session.
		os.Rename(filepath.Join(store, "tapedeck.db"), filepath.Join(store, "damaged.db"))
		list := lsJSON(t, store)
		if len(list) != 1 || list[0].Exit.Code == nil || *list[0].Exit.Code != 6 {
			t.Fatalf("after moving the damaged file aside: %+v", list)
		}
	})
}
