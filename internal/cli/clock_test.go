package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/wrap"
)

// clockPlugins are the fixtures whose output depends on the clock and on
// random numbers.
var clockPlugins = []struct{ id, interpreter, main string }{
	{"clock-node", "node", "main.mjs"},
	{"clock-python", "python3", "main.py"},
}

// clockSession plays the clock fixtures' session: open the panel ("draft
// saved N minutes ago"), save (a random file name).
func clockSession(h *host) {
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":"clock","name":"Clock","version":"1.0.0"},"language":"en","context":{}}}`)
	h.send(`{"jsonrpc":"2.0","method":"panel/open","params":{"context":{}}}`)
	h.awaitResponse("1")
	h.send(`{"jsonrpc":"2.0","id":%s,"result":null}`, h.awaitRequest("ui/setPanel"))
	h.send(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"save","event":"click","context":{}}}`)
	h.awaitNotification("ui/notify")
	h.finish()
}

// recordClock records argv (in dir) through clockSession with the extra
// record flags and environment, and exports it to a tape in a new folder.
func recordClock(t *testing.T, dir string, argv, flags, env []string) string {
	t.Helper()
	store := t.TempDir()
	args := append([]string{"--store", store, "record", "--name", "clock"}, flags...)
	cmd := exec.Command(tapedeckBin, append(append(args, "--"), argv...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	h := newHost(t, cmd)
	clockSession(h)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record %v: %v", argv, err)
	}
	tp := filepath.Join(t.TempDir(), "clock.jsonl")
	if r := tapedeck(t, store, nil, nil, "export", "clock", "-o", tp); r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	return tp
}

// dayLater writes preloads that move the real clock one day ahead, for
// Node (NODE_OPTIONS --require) and Python (a sitecustomize on
// PYTHONPATH), and returns the environment that loads them: the machine
// a day after the recording. tapedeck's own preload must come after them.
func dayLater(t *testing.T) []string {
	dir := t.TempDir()
	node := `const R = Date, day = 86400000;
function D(...a) { if (!new.target) return new R(R.now() + day).toString(); return Reflect.construct(R, a.length ? a : [R.now() + day], new.target); }
D.prototype = R.prototype; D.now = () => R.now() + day; D.parse = R.parse; D.UTC = R.UTC;
globalThis.Date = D;
`
	py := `import datetime as _dt, time as _t
_time = _t.time
_t.time = lambda: _time() + 86400
class datetime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(_t.time(), tz)
_dt.datetime = datetime
`
	if err := os.WriteFile(filepath.Join(dir, "day.cjs"), []byte(node), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "py"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "py", "sitecustomize.py"), []byte(py), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"NODE_OPTIONS=--require " + filepath.Join(dir, "day.cjs"), "PYTHONPATH=" + filepath.Join(dir, "py")}
}

// TestPinnedClockReplaysADayLater: a plugin that says "draft saved 10
// minutes ago" and saves under a random file name, recorded with
// --pin-clock, replays clean a day later (the machine's clock moved on by
// preloads of the user's, which tapedeck's comes after), five times at
// once, with no ignore rule; the same replay on the real clock differs in
// both places.
func TestPinnedClockReplaysADayLater(t *testing.T) {
	t.Parallel()
	for _, p := range clockPlugins {
		t.Run(p.id, func(t *testing.T) {
			if _, err := exec.LookPath(p.interpreter); err != nil {
				t.Skipf("%s is not installed", p.interpreter)
			}
			main, _ := filepath.Abs(filepath.Join("testdata", "plugins", p.id, p.main))
			saved := time.Now().Add(-10*time.Minute - 30*time.Second).UnixMilli()
			env := []string{"CLOCK_SAVED_AT=" + strconv.FormatInt(saved, 10), "CLOCK_DIR=" + t.TempDir()}
			minutesAt := func(at time.Time) int64 { return (at.UnixMilli() - saved) / 60000 }
			recorded := [2]int64{minutesAt(time.Now())}
			tp := recordClock(t, t.TempDir(), []string{p.interpreter, main}, []string{"--pin-clock"}, env)
			recorded[1] = minutesAt(time.Now())

			later := append(dayLater(t), env...)
			for i, r := range tapedeckMany(t, 5, later, "replay", tp) {
				if r.code != 0 {
					t.Errorf("pinned replay %d of 5 a day later: exit %d\n%s%s", i+1, r.code, r.stdout, r.stderr)
				}
			}
			replayed := [2]int64{minutesAt(time.Now().Add(24 * time.Hour))}
			out, r := replayTape(t, tp, later, "--pin-clock=false")
			replayed[1] = minutesAt(time.Now().Add(24 * time.Hour))
			if r.code != 1 {
				t.Fatalf("replay on the real clock a day later: exit %d, want 1\n%s", r.code, r.stdout)
			}
			got := map[string]string{}
			for _, d := range out.Differences {
				for _, ch := range d.Changes {
					got[ch.Path] = ch.Old + " → " + ch.New
				}
			}
			// 10 → 1450 minutes, give or take the minutes a loaded machine
			// spends recording and replaying.
			ch := got["params.tree.children[0].text"]
			var was, now int64
			if _, err := fmt.Sscanf(ch, `"draft saved %d minutes ago" → "draft saved %d minutes ago"`, &was, &now); err != nil ||
				was < recorded[0] || was > recorded[1] || now < replayed[0] || now > replayed[1] {
				t.Errorf("real clock: the panel's text changed %q, want %d–%d → %d–%d minutes", ch, recorded[0], recorded[1], replayed[0], replayed[1])
			}
			if ch := got["params.message"]; !strings.HasPrefix(ch, `"saved draft-`) {
				t.Errorf("real clock: the random file name did not change: %v", got)
			}
		})
	}
}

// TestPinnedClockIsShownAndSaidWithV: show names the pin; replay -v says
// what it adds.
func TestPinnedClockIsShownAndSaidWithV(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	main, _ := filepath.Abs(filepath.Join("testdata", "plugins", "clock-node", "main.mjs"))
	env := []string{"CLOCK_DIR=" + t.TempDir()}
	tp := recordClock(t, t.TempDir(), []string{"node", main}, []string{"--pin-clock"}, env)
	store := t.TempDir()
	if r := tapedeck(t, store, nil, nil, "import", tp); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	r := tapedeck(t, store, nil, nil, "show", "last")
	if !strings.Contains(string(r.stdout), "\nclock        pinned to ") || !strings.Contains(string(r.stdout), " + recorded time, seed ") {
		t.Errorf("show does not name the pinned clock:\n%s", r.stdout)
	}
	var lines []json.RawMessage
	json.Unmarshal(tapedeck(t, store, nil, nil, "ls", "--json").stdout, &lines)
	if len(lines) != 1 || !strings.Contains(string(lines[0]), `"clock":`) {
		t.Errorf("ls --json lacks the clock: %s", lines)
	}
	r = tapedeck(t, store, nil, env, "replay", "-v", tp)
	if r.code != 0 || !strings.Contains(string(r.stderr), "  clock   pinned to ") {
		t.Errorf("replay -v: exit %d, does not say the pin:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestWrapPinClock: a plugin wrapped with --pin-clock records with a
// pinned clock (and its fingerprint, from the launcher's command), and
// its launcher still reads back.
func TestWrapPinClock(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := copyPlugin(t, "clock-node")
	store := t.TempDir()
	if r := tapedeck(t, store, nil, nil, "wrap", "--pin-clock", dir); r.code != 0 {
		t.Fatalf("wrap --pin-clock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	script, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(wrap.LauncherFile)))
	if err != nil || !strings.Contains(string(script), " record --name 'clock-node' --pin-clock -- ") {
		t.Fatalf("launcher (%v):\n%s", err, script)
	}
	if r := tapedeck(t, store, nil, nil, "doctor", dir); r.code != 0 {
		t.Errorf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cmd := exec.Command(filepath.Join(dir, filepath.FromSlash(wrap.LauncherFile)))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CLOCK_DIR="+t.TempDir())
	h := newHost(t, cmd)
	clockSession(h)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the wrapped plugin: %v", err)
	}
	list := lsJSON(t, store)
	if len(list) != 1 || list[0].Clock == nil || list[0].Fingerprint == nil || list[0].Fingerprint.Root != "." || list[0].Fingerprint.SDK != "0.3.1" {
		t.Fatalf("the wrapped session: %+v", list)
	}
}

// TestPinClockOnAnUnpinnedTape: replay --pin-clock on a tape recorded
// without it pins the clock to the recorded start (not the randomness,
// which was never seeded): a day later only the random name differs.
func TestPinClockOnAnUnpinnedTape(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	main, _ := filepath.Abs(filepath.Join("testdata", "plugins", "clock-node", "main.mjs"))
	saved := time.Now().Add(-10*time.Minute - 30*time.Second).UnixMilli()
	env := []string{"CLOCK_SAVED_AT=" + strconv.FormatInt(saved, 10), "CLOCK_DIR=" + t.TempDir()}
	tp := recordClock(t, t.TempDir(), []string{"node", main}, nil, env)
	later := append(dayLater(t), env...)
	paths := func(args ...string) string {
		out, r := replayTape(t, tp, later, args...)
		if r.code != 1 {
			t.Fatalf("replay %q a day later: exit %d\n%s", args, r.code, r.stdout)
		}
		var p []string
		for _, d := range out.Differences {
			for _, ch := range d.Changes {
				p = append(p, ch.Path)
			}
		}
		return strings.Join(p, " ")
	}
	if got := paths(); got != "params.tree.children[0].text params.message" {
		t.Errorf("unpinned a day later: differences at %q", got)
	}
	if got := paths("--pin-clock"); got != "params.message" {
		t.Errorf("--pin-clock a day later: differences at %q, want only the random name", got)
	}
}

// TestADroppedPinIsSaid: a launcher that sets its own NODE_OPTIONS drops
// the pinned clock; record says so on the spot, the session records it,
// and show says the clock was not pinned (it said "pinned").
func TestADroppedPinIsSaid(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "plugins", "clock-node"))
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "launched", "--pin-clock", "--",
		"sh", "-c", "NODE_OPTIONS=--no-warnings exec node main.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CLOCK_SAVED_AT="+strconv.FormatInt(time.Now().UnixMilli(), 10), "CLOCK_DIR="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	h := newHost(t, cmd)
	clockSession(h)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record: %v: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "tapedeck: --pin-clock: the plugin never loaded the pinned clock") {
		t.Errorf("record's stderr does not say the pin was dropped:\n%s", stderr.String())
	}
	r := tapedeck(t, store, nil, nil, "show", "launched")
	if r.code != 0 || !strings.Contains(string(r.stdout), "clock        not pinned: the plugin never loaded the pinned clock") {
		t.Errorf("show (exit %d) does not say the clock was not pinned:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
