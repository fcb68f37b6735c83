package cli

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// TestExportOverAFileKeepsItsMode: export -o over an existing tape (a
// 0600 one, say, kept private) used to leave it 0644.
func TestExportOverAFileKeepsItsMode(t *testing.T) {
	t.Parallel()
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

// TestImportCutsLongLines: import stored a tape's 300 MB line whole (and
// show then took 900 MB); it now applies --max-frame as record does: the
// first bytes, the full length and the SHA-256.
func TestImportCutsLongLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("z", 3<<20)
	tapeText := `{"tapedeck":1,"session":{"id":"01long00000000000000000000","command":["p"],"cwd":"","started":"2025-01-01T00:00:00Z","ended":null,"status":"complete","exit":{},"frames":{"in":0,"out":0,"err":0},"bytes":{"in":0,"out":0,"err":0},"plugin":{"id":"","name":"","version":""},"tapedeck":"t"}}` + "\n" +
		`{"seq":1,"at":0,"dir":"err","text":"` + long + `"}` + "\n" +
		`{"seq":2,"at":5,"dir":"err","text":"short"}` + "\n"
	file := filepath.Join(t.TempDir(), "long.tape")
	os.WriteFile(file, []byte(tapeText), 0o644)
	dir := t.TempDir()
	if r := tapedeck(t, dir, nil, nil, "import", "--max-frame", "1048576", file); r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	_, frames := exported(t, dir, "last")
	sum := sha256.Sum256([]byte(long))
	if len(frames) != 2 || len(frames[0].Raw) != 1<<20 || frames[0].Cut == nil || frames[0].Cut.Len != 3<<20 || frames[0].Cut.SHA256 != sum {
		t.Fatalf("the long line was stored %d bytes long, cut %+v; want 1 MiB, cut with its length and hash", len(frames[0].Raw), frames[0].Cut)
	}
	if string(frames[1].Raw) != "short" || frames[1].Cut != nil {
		t.Errorf("a short line changed: %+v", frames[1])
	}
	if r := tapedeck(t, dir, nil, nil, "import", "--max-frame", "0", file); r.code != 2 {
		t.Errorf("--max-frame 0: exit %d, want 2", r.code)
	}
}
