package smallfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte(`{"id":"p"}`), 0o644)
	if b, err := Read(ok, 100); err != nil || string(b) != `{"id":"p"}` {
		t.Errorf("Read(ok) = %q, %v", b, err)
	}
	if b, err := Read(ok, 10); err != nil || len(b) != 10 {
		t.Errorf("Read at exactly the cap = %q, %v", b, err)
	}
	if _, err := Read(ok, 9); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), ok) {
		t.Errorf("Read over the cap = %v, want ErrTooLarge naming the file", err)
	}
	if _, err := Read(dir, 100); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a folder") {
		t.Errorf("Read(folder) = %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 100); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read(missing) = %v, want not exist", err)
	}
}

// TestReadRefusesWhatNeverEnds: a named pipe nobody writes (opening it for
// reading would wait for a writer) and /dev/zero (which never ends) are
// refused at once, saying what they are; a link to them too.
func TestReadRefusesWhatNeverEnds(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes or /dev/zero")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for path, what := range map[string]string{fifo: "a named pipe", link: "a character device"} {
		if _, err := Read(path, 1<<20); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), path) {
			t.Errorf("Read(%s) = %v, want it refused as %s", path, err, what)
		}
	}
}
