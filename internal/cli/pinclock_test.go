package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/waittest"
)

// stampPlugins are the fixtures whose output depends on the clock to the
// millisecond, on crypto randomness and on the files they keep.
var stampPlugins = []struct{ id, interpreter, main string }{
	{"stamp-node", "node", "main.mjs"},
	{"stamp-python", "python3", "main.py"},
}

// notifyOf is the message of the tape's ui/notify.
func notifyOf(t *testing.T, tp string) string {
	t.Helper()
	for _, f := range readTapeOrFatal(t, tp).Frames {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
		}
		if json.Unmarshal(f.Raw, &m) == nil && m.Method == "ui/notify" {
			return m.Params.Message
		}
	}
	t.Fatalf("%s has no ui/notify", tp)
	return ""
}

// TestPinnedClockHoldsUnderLoad: a plugin that shows the time to the
// second and a created_at to the millisecond, names things with
// crypto.randomUUID / getRandomValues (uuid.uuid4 / os.urandom) and
// creates a file under that name in STAMP_HOME (EEXIST when it is there),
// recorded with --pin-clock, replays clean 20 times in parallel while each
// starts 900 ms slower than it did, each with a fresh STAMP_HOME
// (--fresh-dir), removed after. Without --fresh-dir the pinned replay
// reproduces the name the recording created, and the plugin says EEXIST.
func TestPinnedClockHoldsUnderLoad(t *testing.T) {
	t.Parallel()
	for _, p := range stampPlugins {
		t.Run(p.id, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(p.interpreter); err != nil {
				t.Skipf("%s is not installed", p.interpreter)
			}
			main, _ := filepath.Abs(filepath.Join("testdata", "plugins", p.id, p.main))
			home := t.TempDir()
			env := []string{"STAMP_HOME=" + home}
			tp := recordClock(t, t.TempDir(), []string{p.interpreter, main}, []string{"--pin-clock"}, env)
			if msg := notifyOf(t, tp); !strings.HasPrefix(msg, "saved note-") {
				t.Fatalf("the recording did not save: %q", msg)
			}

			tmp := t.TempDir() // the replays' temporary folder: empty again after them
			slow := append([]string{"STAMP_SLOW_START_MS=900", "TMPDIR=" + tmp}, env...)
			clean, n := 0, waittest.AtOnce(20)
			for i, r := range tapedeckMany(t, n, slow, "replay", tp, "--fresh-dir", "STAMP_HOME") {
				if r.code == 0 {
					clean++
				} else {
					t.Errorf("pinned replay %d of %d, 900 ms slower: exit %d\n%s%s", i+1, n, r.code, r.stdout, r.stderr)
				}
			}
			t.Logf("%s: %d of %d pinned replays clean, each started 900 ms slower, all at once", p.id, clean, n)
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("the replays left %d entries in their temporary folder (fresh folders, preloads): %v", len(left), left)
			}

			_, r := replayTape(t, tp, env)
			if r.code != 1 || !strings.Contains(string(r.stdout), "EEXIST") {
				t.Errorf("pinned replay into the recording's STAMP_HOME: exit %d, want 1 with EEXIST\n%s", r.code, r.stdout)
			}
		})
	}
}

// TestPinClockOnAnUnpinnedTapeLeavesRandomnessUnseeded: --pin-clock on a
// tape recorded without a pin pins the clock only: the random name is a
// new one in each replay, as README says (it was the same every time).
func TestPinClockOnAnUnpinnedTapeLeavesRandomnessUnseeded(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	main, _ := filepath.Abs(filepath.Join("testdata", "plugins", "clock-node", "main.mjs"))
	env := []string{"CLOCK_DIR=" + t.TempDir()}
	tp := recordClock(t, t.TempDir(), []string{"node", main}, nil, env)
	names := map[string]bool{}
	for range 3 {
		out, r := replayTape(t, tp, env, "--pin-clock")
		if r.code != 1 {
			t.Fatalf("replay --pin-clock: exit %d, want 1 (the random name)\n%s", r.code, r.stdout)
		}
		for _, d := range out.Differences {
			for _, ch := range d.Changes {
				if ch.Path == "params.message" {
					names[ch.New] = true
				}
			}
		}
	}
	if len(names) != 3 {
		t.Errorf("3 replays --pin-clock of an unpinned tape drew %d different random names, want 3: %v", len(names), names)
	}
}

// TestReadmeFreshDir runs the README's two replays of a plugin that keeps
// state, exactly as shown: pinned, the recorded name collides (EEXIST);
// with --fresh-dir STAMP_HOME it is the same.
func TestReadmeFreshDir(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	main, _ := filepath.Abs(filepath.Join("testdata", "plugins", "stamp-node", "main.mjs"))
	env := []string{"STAMP_HOME=" + t.TempDir()}
	tp := recordClock(t, t.TempDir(), []string{"node", main}, []string{"--pin-clock"}, env)
	ws := t.TempDir()
	os.Mkdir(filepath.Join(ws, "tapes"), 0o755)
	b, _ := os.ReadFile(tp)
	os.WriteFile(filepath.Join(ws, "tapes", "stamp.jsonl"), b, 0o644)
	wantIn(t, readmeCmd(t, ws, env, "tapedeck replay tapes/stamp.jsonl", nil), 1,
		"tapes/stamp.jsonl: 1 difference (compared 3 recorded and 3 replayed frames, ",
		"changed   notification ui/notify  recorded seq ",
		`    params.kind: "success" → "error"`, `    params.message: "[-saved-]{+could not save+} note-`, `{+: EEXIST+}"`)
	wantIn(t, readmeCmd(t, ws, env, "tapedeck replay tapes/stamp.jsonl --fresh-dir STAMP_HOME", nil), 0,
		"tapes/stamp.jsonl: same (compared 3 recorded and 3 replayed frames, ")
}
