package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// TestLongWriteMapsTheFileAnew stores a session of 300,000 frames (about
// 30 MB) twice: once with the map opened anew every MiB of frames, and
// once, as a control, in one map. bbolt reads the pages a write changes
// through its map, and what it read stays resident until the map goes:
// the control's mapped pages grow with the session (that is what took a
// 10 M-frame import to 316 MB), the remapped write's stay under a bound.
//
// It runs alone (not parallel): other tests' maps would count in the measure.
func TestLongWriteMapsTheFileAnew(t *testing.T) {
	if race.Enabled {
		t.Skip("one goroutine writing 600,000 frames: nothing for the race detector, which makes it 20 s; the plain run measures it")
	}
	if testing.Short() {
		t.Skip("stores 300,000 frames twice")
	}
	if _, err := rssFile(); err != nil {
		t.Skipf("no RssFile in /proc/self/status: %v", err)
	}
	const frames = 300000
	grew := func(remapEvery int) int64 {
		st := newStore(t)
		st.remapEvery = remapEvery
		base, err := rssFile()
		if err != nil {
			t.Fatal(err)
		}
		peak := base
		n := 0
		f := frame.Frame{}
		err = st.Put(*newMeta(fmt.Sprintf("s%d", remapEvery)), func() (*frame.Frame, error) {
			if n == frames {
				return nil, io.EOF
			}
			if n%10000 == 0 {
				if r, err := rssFile(); err == nil && r > peak {
					peak = r
				}
			}
			n++
			f = frame.Frame{Seq: uint64(n), At: int64(n) * 1000, Dir: frame.Dir(1 + n%2),
				Raw: fmt.Appendf(f.Raw[:0], `{"jsonrpc":"2.0","method":"tick","params":{"n":%d,"pad":"%070d"}}`, n, n)}
			return &f, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		if err := st.Frames(fmt.Sprintf("s%d", remapEvery), func(*frame.Frame) error { got++; return nil }); err != nil || got != frames {
			t.Fatalf("read back %d of %d frames: %v", got, frames, err)
		}
		return peak - base
	}
	remapped := grew(1 << 20)
	control := grew(1 << 62)
	t.Logf("mapped pages grew %.1f MB with a map a MiB, %.1f MB in one map", float64(remapped)/1e6, float64(control)/1e6)
	if remapped > 3<<20 {
		t.Errorf("with a new map every MiB of frames, the mapped pages grew %d bytes: want under 3 MiB", remapped)
	}
	if control < 3*remapped || control < 4<<20 {
		t.Errorf("the control grew %d bytes in one map (the remapped write %d): the measure does not see the map", control, remapped)
	}
}

// rssFile is this process's resident file-backed memory, in bytes.
func rssFile() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("RssFile:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no RssFile line")
}

// TestOwnWritesAreNotWalkedAgain puts 200 sessions through one Store,
// which makes the file: each opening finds it in the state this store's
// last write left, and walks nothing (before, every opening after a put
// walked the growing file again: a test's thousand puts took 78 s under
// the race detector). A change made by someone else is still walked.
func TestOwnWritesAreNotWalkedAgain(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	for i := range 200 {
		err := st.Put(*newMeta(fmt.Sprintf("01%024d", i)), func() (*frame.Frame, error) { return nil, io.EOF })
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.List(nil); err != nil {
		t.Fatal(err)
	}
	if st.sound.walks != 0 {
		t.Errorf("200 puts and a list walked the trees %d times, want 0", st.sound.walks)
	}
	// Another process's write: the same bytes, a new state (its time).
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(st.dbPath(), later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := st.List(nil); err != nil || st.sound.walks != 1 {
		t.Errorf("after another's change: list %v, %d walks; want it walked (1)", err, st.sound.walks)
	}
}
