package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProblem: a file of this user's that only it can write is trusted;
// one group or others can write is not, and says its mode.
func TestProblem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode os.FileMode
		want string
	}{{0o700, ""}, {0o755, ""}, {0o720, "writable by others (mode 0720)"}, {0o702, "writable by others (mode 0702)"}} {
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Problem(fi); got != c.want {
			t.Errorf("mode %04o: Problem = %q, want %q", c.mode, got, c.want)
		}
	}
	if fi, err := os.Stat("/"); err == nil {
		if _, _, foreign := ForeignOwner(fi); foreign {
			t.Error("/ is root's: not a foreign owner")
		}
		if p := Problem(fi); strings.Contains(p, "owned by") {
			t.Errorf("/: %q", p)
		}
	}
}
