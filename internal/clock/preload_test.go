package clock

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// runPinned runs a one-line program with the pin of c in its environment
// (after p.Publish(at) when at is not zero) and returns its stdout.
func runPinned(t *testing.T, c frame.Clock, at time.Time, prog string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		t.Skipf("%s is not installed", prog)
	}
	env, p, err := Pin(os.Environ(), &c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !at.IsZero() {
		if err := p.Publish(at); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(prog, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return strings.TrimSpace(string(out))
}

// TestPublishedTimeIsTheClock: the preloads read the published time (the
// recording's), to the millisecond, however long the program ran before
// it read the clock; the random numbers of a seed are the same every run,
// unseeded ones are not.
func TestPublishedTimeIsTheClock(t *testing.T) {
	origin := time.UnixMilli(1700000000000)
	at := origin.Add(90*time.Second + 123456789*time.Nanosecond) // …:01:30.123456789
	c := frame.Clock{Origin: origin, Seed: 7}
	node := `const s = Date.now(); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
console.log(s, Date.now(), new Date().toISOString(), crypto.randomUUID(), require("node:crypto").randomUUID(), Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString("hex"), Math.random())`
	py := `import time, datetime, uuid, os, random
s = time.time_ns(); time.sleep(0.3)
print(s, time.time_ns(), datetime.datetime.now(datetime.timezone.utc).isoformat(), uuid.uuid4(), os.urandom(4).hex(), random.random())`
	for _, lang := range []struct{ prog, flag, code, want string }{
		{"node", "-e", node, "1700000090123 1700000090123 2023-11-14T22:14:50.123Z "},
		{"python3", "-c", py, "1700000090123456789 1700000090123456789 2023-11-14T22:14:50.123456+00:00 "},
	} {
		first := runPinned(t, c, at, lang.prog, lang.flag, lang.code)
		if !strings.HasPrefix(first, lang.want) {
			t.Errorf("%s pinned: %q, want it to start %q", lang.prog, first, lang.want)
		}
		if again := runPinned(t, c, at, lang.prog, lang.flag, lang.code); again != first {
			t.Errorf("%s: two runs of one seed differ:\n%s\n%s", lang.prog, first, again)
		}
		words := strings.Fields(first)
		if lang.prog == "node" && (words[3] == words[4] || !strings.HasPrefix(words[3][14:], "4")) {
			t.Errorf("node: randomUUID %q %q: want two v4 UUIDs", words[3], words[4])
		}
		unseeded := c
		unseeded.Unseeded = true
		a := strings.Fields(runPinned(t, unseeded, at, lang.prog, lang.flag, lang.code))
		b := strings.Fields(runPinned(t, unseeded, at, lang.prog, lang.flag, lang.code))
		if a[0] != words[0] || a[3] == b[3] || a[len(a)-1] == b[len(b)-1] {
			t.Errorf("%s unseeded: clock %s (want %s), random %v vs %v: want the clock pinned and the rest random", lang.prog, a[0], words[0], a[3:], b[3:])
		}
		// Nothing published yet: the recorded start.
		if got := strings.Fields(runPinned(t, c, time.Time{}, lang.prog, lang.flag, lang.code))[0]; !strings.HasPrefix(got, "1700000000000") {
			t.Errorf("%s before the first line: %s, want the origin", lang.prog, got)
		}
	}
}

func TestPublishFormat(t *testing.T) {
	p, err := Install()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Publish(time.Unix(0, 1700000090123456789)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p.Dir() + "/" + nowFile)
	if string(b) != "01700000090123456789 01700000090123456789\n" {
		t.Errorf("now file %q", b)
	}
	env := p.Env([]string{}, frame.Clock{Origin: time.UnixMilli(1), Unseeded: true})
	for _, kv := range env {
		if strings.HasPrefix(kv, EnvSeed+"=") {
			t.Errorf("unseeded clock sets %s", kv)
		}
	}
}

// TestOnlyThePluginIsPinned: a pinned plugin's own children (Node running
// Python running Node) read the real clock unless Children says
// otherwise, and see NODE_OPTIONS and PYTHONPATH as the user had them.
func TestOnlyThePluginIsPinned(t *testing.T) {
	for _, prog := range []string{"node", "python3"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	origin := time.UnixMilli(1700000000000)
	// node prints its clock, then runs python3, which prints its clock and
	// what it sees of NODE_OPTIONS and PYTHONPATH.
	prog := `const {execFileSync} = require("node:child_process");
console.log(Date.now());
process.stdout.write(execFileSync("python3", ["-c", "import time, os; print(time.time_ns()//1000000); print(repr(os.environ.get('NODE_OPTIONS')), repr(os.environ.get('PYTHONPATH')), [k for k in os.environ if k.startswith('TAPEDECK_CLOCK')])"]))`
	for _, children := range []bool{false, true} {
		t.Setenv("NODE_OPTIONS", "--no-warnings")
		t.Setenv("PYTHONPATH", "/users/own")
		out := strings.Split(runPinned(t, frame.Clock{Origin: origin, Children: children}, time.Time{}, "node", "-e", prog), "\n")
		if len(out) != 3 || out[0] != "1700000000000" {
			t.Fatalf("children %v: %q; want the plugin pinned at 1700000000000, then its child's two lines", children, out)
		}
		childPinned := out[1] == "1700000000000"
		if childPinned != children {
			t.Errorf("children %v: the child read %s (pinned: %v)", children, out[1], childPinned)
		}
		if !children && out[2] != "'--no-warnings' '/users/own' []" {
			t.Errorf("the child sees %s; want the user's NODE_OPTIONS and PYTHONPATH and no TAPEDECK_CLOCK_*", out[2])
		}
	}
}

// TestLoadedSaysWhetherThePinHeld: a launcher that replaces NODE_OPTIONS
// drops the pin, and Loaded says so; a plugin that loads it is seen.
func TestLoadedSaysWhetherThePinHeld(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	for _, tc := range []struct {
		name string
		argv []string
		want bool
	}{
		{"node", []string{"node", "-e", "0"}, true},
		{"a launcher that sets its own NODE_OPTIONS", []string{"sh", "-c", `NODE_OPTIONS=--no-warnings exec node -e 0`}, false},
		{"not node", []string{"true"}, false},
	} {
		env, p, err := Pin(os.Environ(), &frame.Clock{Origin: time.UnixMilli(1)})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", tc.name, err, out)
		}
		if got := p.Loaded(); got != tc.want {
			t.Errorf("%s: Loaded() = %v, want %v", tc.name, got, tc.want)
		}
		p.Close()
	}
}

// TestInstallAvoidsAColonInTMPDIR: PYTHONPATH is split on ':', so a
// temporary folder whose path holds one would leave Python unpinned; the
// preload goes elsewhere and Python is pinned.
func TestInstallAvoidsAColonInTMPDIR(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	odd := t.TempDir() + "/a:b"
	if err := os.Mkdir(odd, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", odd)
	got := runPinned(t, frame.Clock{Origin: time.UnixMilli(1700000000000)}, time.Time{}, "python3", "-c", "import time; print(time.time_ns()//1000000)")
	if got != "1700000000000" {
		t.Errorf("with TMPDIR=%s python3 read %s, want the pinned 1700000000000", odd, got)
	}
}
