package cli

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// damagedStore stores three sessions (one of them with lines big enough to
// be stored in chunks) and returns the store and its database's bytes.
func damagedStore(t *testing.T) (string, []byte) {
	t.Helper()
	store := t.TempDir()
	inputs := [][]byte{someLines(50, 100), someLines(3, 9000), someLines(200, 20)}
	putSessions(t, store, len(inputs), func(i int) (frame.Session, []frame.Frame) {
		m, _ := fakeSession(fmt.Sprintf("s%d", i), "p", time.Date(2025, 6, 1, 0, i, 0, 0, time.UTC))
		var frames []frame.Frame
		for j, line := range bytes.SplitAfter(inputs[i], []byte("\n")) {
			if len(line) > 0 {
				frames = append(frames, frame.Frame{Seq: uint64(j + 1), At: int64(j), Dir: frame.Dir(1 + j%2), Raw: bytes.TrimSuffix(line, []byte("\n"))})
			}
		}
		return m, frames
	})
	good, err := os.ReadFile(filepath.Join(store, "tapedeck.db"))
	if err != nil {
		t.Fatal(err)
	}
	return store, good
}

// usedBytes is how much of a bbolt file its first meta page says is in use.
func usedBytes(db []byte) int {
	pageSize := binary.LittleEndian.Uint32(db[16+8:])
	hw := binary.LittleEndian.Uint64(db[16+40:])
	return int(hw) * int(pageSize)
}

// garble writes random bytes over every page after the two meta pages.
func garble(db []byte, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	bad := bytes.Clone(db)
	for p := 8192; p+4096 <= usedBytes(db); p += 4096 {
		off := p + 16 + r.IntN(4096-16-64)
		for i := range 64 {
			bad[off+i] = byte(r.Uint32())
		}
	}
	return bad
}

// TestDamagedDatabaseOneLine is the audit's damaged database: a truncated,
// a 4 KiB, a garbled and a foreign file used to crash every command with
// SIGBUS (exit 2, a goroutine dump on the host's log). Now the read
// commands say it in one line and exit 1 (check: 2, could not check), and
// record returns the plugin's own status with one line of its own.
func TestDamagedDatabaseOneLine(t *testing.T) {
	t.Parallel()
	store, good := damagedStore(t)
	db := filepath.Join(store, "tapedeck.db")
	cases := []struct {
		name string
		data []byte
	}{
		{"truncated", good[:usedBytes(good)/2]},
		{"4 KiB", good[:4096]},
		{"garbled", garble(good, 1)},
		{"not bbolt", bytes.Repeat([]byte("not a bbolt file "), 1000)},
	}
	commands := []struct {
		args []string
		code int
	}{
		{[]string{"ls"}, 1},
		{[]string{"ls", "--json"}, 1},
		{[]string{"show", "last"}, 1},
		{[]string{"export", "last"}, 1},
		{[]string{"check", "last"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range commands {
				if err := os.WriteFile(db, c.data, 0o600); err != nil {
					t.Fatal(err)
				}
				r := tapedeck(t, store, nil, nil, cmd.args...)
				if c.name == "garbled" && r.code == 0 {
					continue // what it read was sound: the damage is elsewhere (verify finds it, below)
				}
				if r.code != cmd.code {
					t.Errorf("%s: exit %d, want %d; stderr %q", cmd.args, r.code, cmd.code, r.stderr)
				}
				oneLine(t, r.stderr, "database damaged")
				if !strings.Contains(string(r.stderr), "move it aside; sessions not yet ingested stay in their spools") {
					t.Errorf("%s: stderr %q does not say what to do", cmd.args, r.stderr)
				}
			}
			r := tapedeck(t, store, nil, nil, "verify")
			if r.code != 1 || !strings.Contains(string(r.stdout), "damaged: ") {
				t.Errorf("verify: exit %d, stdout %q; want 1 and the damage named", r.code, r.stdout)
			}
			os.WriteFile(db, c.data, 0o600)
			input := someLines(20, 10)
			r = recordFixture(t, store, "exit", input, "FIXTURE_CODE=6")
			if r.code != 6 {
				t.Errorf("record: exit %d, want the plugin's 6; stderr %q", r.code, r.stderr)
			}
			if c.name == "garbled" {
				// Damage inside pages shows only where it is read: the
				// session may well be stored.
				if bytes.Count(r.stderr, []byte("\n")) > 1 {
					t.Errorf("record: stderr %q, want at most one line", r.stderr)
				}
				return
			}
			oneLine(t, r.stderr, "database damaged")
			if got, _ := os.ReadFile(db); !bytes.Equal(got, c.data) {
				t.Error("record changed the damaged database")
			}
		})
	}
	t.Run("garbled, many ways", func(t *testing.T) {
		os.WriteFile(db, good, 0o600)
		id := lsJSON(t, store)[0].ID
		want := tapedeck(t, store, nil, nil, "export", id)
		for seed := range uint64(8) {
			os.WriteFile(db, garble(good, seed+10), 0o600)
			r := tapedeck(t, store, nil, nil, "export", id)
			switch {
			case r.code == 0 && !bytes.Equal(r.stdout, want.stdout):
				t.Errorf("seed %d: export changed bytes and exit 0", seed)
			case r.code != 0 && r.code != 1, bytes.Contains(r.stderr, []byte("goroutine ")):
				t.Errorf("seed %d: export exit %d: %s", seed, r.code, r.stderr)
			}
		}
	})
}

// TestEmptyDatabaseIsSaid: a 0-byte database file (the sessions it held
// are gone) is named on stderr, once, not silently started anew.
func TestEmptyDatabaseIsSaid(t *testing.T) {
	t.Parallel()
	store, _ := damagedStore(t)
	os.WriteFile(filepath.Join(store, "tapedeck.db"), nil, 0o600)
	r := tapedeck(t, store, nil, nil, "ls")
	if r.code != 0 {
		t.Fatalf("ls: exit %d: %s", r.code, r.stderr)
	}
	oneLine(t, r.stderr, "database file is empty (0 bytes)")
	if !strings.Contains(string(r.stderr), "any sessions it held are gone") {
		t.Errorf("stderr %q does not say what it means", r.stderr)
	}
}

// TestVerifyClean: a sound store verifies with exit 0, as the README shows.
func TestVerifyClean(t *testing.T) {
	t.Parallel()
	store, _ := damagedStore(t)
	r := tapedeck(t, store, nil, nil, "verify")
	if r.code != 0 || !strings.HasSuffix(string(r.stdout), ": 3 sessions, 253 frames\nno damage\n") {
		t.Errorf("verify: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := tapedeck(t, store, nil, nil, "verify", "extra"); r.code != 2 {
		t.Errorf("verify extra: exit %d, want 2", r.code)
	}
}

// TestGCThatWouldGrowSaysSo: gc keeps the old file when the compacted copy
// would be larger, and says so.
func TestGCThatWouldGrowSaysSo(t *testing.T) {
	t.Parallel()
	store, good := damagedStore(t)
	db := filepath.Join(store, "tapedeck.db")
	tight := good[:usedBytes(good)]
	os.WriteFile(db, tight, 0o600)
	r := tapedeck(t, store, nil, nil, "gc")
	if r.code != 0 || !strings.HasPrefix(string(r.stdout), "kept "+store+" as it is: a compacted copy would be ") {
		t.Errorf("gc: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if got, _ := os.ReadFile(db); !bytes.Equal(got, tight) {
		t.Error("gc replaced the file with a larger one")
	}
}
