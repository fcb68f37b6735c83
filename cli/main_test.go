package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/tape"
)

// tapedeckBin is the real binary, built once by TestMain (or named by
// TAPEDECK_TEST_BIN); the scripts find it on PATH as tapedeck.
var tapedeckBin string

// TestMain runs the tests, or, when the test binary was started as one, a
// fixture plugin: with TAPEDECK_FIXTURE=MODE (the Go tests' way), or as
// the command "fixture MODE [ARGS…]" (the scripts' way, set up by
// testscript; the arguments are the plugin's and ignored).
func TestMain(m *testing.M) {
	if mode := os.Getenv("TAPEDECK_FIXTURE"); mode != "" {
		os.Exit(runFixture(mode))
	}
	testscript.Main(e2e{m}, map[string]func(){
		"fixture": func() {
			if len(os.Args) < 2 {
				fmt.Fprintln(os.Stderr, "usage: fixture MODE [ARGS…]")
				os.Exit(100)
			}
			os.Exit(runFixture(os.Args[1]))
		},
	})
}

func runFixture(mode string) int {
	fn, ok := fixtures[mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown fixture %q\n", mode)
		return 100
	}
	return fn()
}

// e2e runs the tests from the module root, where the README's commands run
// and the bundled plugins and tapes are (testdata/), against the real
// binary: built from the module root (with -race under the race
// detector), or another build named by TAPEDECK_TEST_BIN (an older one,
// to see a new test fail before its fix).
type e2e struct{ m *testing.M }

func (e e2e) Run() int {
	// CI set on the machine that runs these tests (as CI services do) is
	// not what the tests mean: the ones about CI set it themselves.
	if err := os.Unsetenv("CI"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin := os.Getenv("TAPEDECK_TEST_BIN")
	if bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		bin = abs
	}
	if err := os.Chdir(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "tapedeck-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	tapedeckBin = filepath.Join(dir, "tapedeck")
	if bin != "" {
		if err := os.Symlink(bin, tapedeckBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return e.m.Run()
	}
	args := []string{"build", "-o", tapedeckBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tapedeck:", err)
		return 1
	}
	return e.m.Run()
}

// result is one finished tapedeck invocation.
type result struct {
	stdout, stderr []byte
	code           int
}

// tapedeck runs the binary with the store and stdin given and waits for it.
func tapedeck(t *testing.T, store string, stdin []byte, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(tapedeckBin, append([]string{"--store", store}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.Bytes(), stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run tapedeck %v: %v", args, err)
	}
	return r
}

// tapedeckMany runs n copies of one tapedeck command at once and returns
// their results: the proofs that a replay passes every time run their
// plugins side by side.
func tapedeckMany(t *testing.T, n int, env []string, args ...string) []result {
	t.Helper()
	results := make([]result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(tapedeckBin, append([]string{"--store", t.TempDir()}, args...)...)
			cmd.Env = append(os.Environ(), env...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			results[i] = result{stdout: out.Bytes(), stderr: errb.Bytes()}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				results[i].code = ee.ExitCode()
			} else {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d of tapedeck %v: %v", i+1, args, err)
		}
	}
	return results
}

// busy keeps every core busy with spinning goroutines until the test ends:
// what must hold on a loaded machine is tested on one.
func busy(t *testing.T) {
	stop := make(chan struct{})
	var load sync.WaitGroup
	for range runtime.NumCPU() {
		load.Add(1)
		go func() {
			defer load.Done()
			x := 0
			for {
				select {
				case <-stop:
					return
				default:
					for i := range 100000 {
						x += i
					}
				}
			}
		}()
	}
	t.Cleanup(func() { close(stop); load.Wait() })
}

// fixture is the argv and environment that run the test binary as plugin mode.
func fixture(mode string, env ...string) ([]string, []string) {
	return []string{"--", os.Args[0]}, append([]string{"TAPEDECK_FIXTURE=" + mode}, env...)
}

// recordFixture records the fixture plugin in mode with stdin as the host's input.
func recordFixture(t *testing.T, store string, mode string, stdin []byte, env ...string) result {
	t.Helper()
	argv, fenv := fixture(mode, env...)
	return tapedeck(t, store, stdin, fenv, append([]string{"record"}, argv...)...)
}

// exported reads a session back through `tapedeck export`.
func exported(t *testing.T, store, ref string) (*frame.Session, []frame.Frame) {
	t.Helper()
	r := tapedeck(t, store, nil, nil, "export", ref)
	if r.code != 0 {
		t.Fatalf("export %s: exit %d: %s", ref, r.code, r.stderr)
	}
	tr, err := tape.NewReader(bytes.NewReader(r.stdout))
	if err != nil {
		t.Fatalf("read exported tape: %v", err)
	}
	var frames []frame.Frame
	for {
		f, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read exported tape: %v", err)
		}
		c := *f
		c.Raw = bytes.Clone(f.Raw)
		if f.Cut != nil { // the reader's, reused for the next cut frame
			cut := *f.Cut
			c.Cut = &cut
		}
		frames = append(frames, c)
	}
	return tr.Session(), frames
}

// stream joins the frames of one direction back into the bytes that crossed.
func stream(frames []frame.Frame, d frame.Dir) []byte {
	var b bytes.Buffer
	for _, f := range frames {
		if f.IsEvent() || f.Dir != d {
			continue
		}
		b.Write(f.Raw)
		if !f.NoEOL {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func events(frames []frame.Frame) []string {
	var ev []string
	for _, f := range frames {
		if f.IsEvent() {
			s := f.Event
			if f.Signal != "" {
				s += ":" + f.Signal
			}
			if f.Code != nil {
				s += fmt.Sprintf(":%d", *f.Code)
			}
			ev = append(ev, s)
		}
	}
	return ev
}

func lsJSON(t *testing.T, store string) []frame.Session {
	t.Helper()
	r := tapedeck(t, store, nil, nil, "ls", "--json")
	if r.code != 0 {
		t.Fatalf("ls --json: exit %d: %s", r.code, r.stderr)
	}
	var list []frame.Session
	if err := json.Unmarshal(r.stdout, &list); err != nil {
		t.Fatalf("ls --json output: %v\n%s", err, r.stdout)
	}
	return list
}

// waitFor polls cond until it holds or the deadline passes. It is for
// conditions in other processes, which cannot signal us.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		case <-tick.C:
		}
	}
}

// sharedDir is ../shared, or "" when it is absent.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, _ := filepath.Abs("../shared")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// skipBigUnderRace skips a test that moves many megabytes through the
// race-built binary: the plain run (go test ./...) covers it, and under the
// race detector it only costs minutes.
func skipBigUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("multi-MiB byte fidelity is tested without -race; under the race detector it only costs time")
	}
}

// jsonTestSuite is every file of ../shared/corpora/JSONTestSuite/test_parsing
// as a line (some hold raw newlines, NUL, U+2028, invalid UTF-8); it skips
// the test, saying why, when the corpus is absent.
func jsonTestSuite(t *testing.T) []byte {
	t.Helper()
	shared := sharedDir(t)
	if shared == "" {
		t.Skip("../shared is absent: the JSONTestSuite corpus is not available")
	}
	files, _ := filepath.Glob(filepath.Join(shared, "corpora/JSONTestSuite/test_parsing/*.json"))
	if len(files) == 0 {
		t.Skip("no JSONTestSuite files under ../shared/corpora")
	}
	sort.Strings(files)
	var input bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		input.Write(b)
		input.WriteByte('\n')
	}
	return input.Bytes()
}
