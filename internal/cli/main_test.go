package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tapedeck/tapedeck/internal/race"
	"github.com/tapedeck/tapedeck/internal/waittest"
)

// nestedRun is set in the environment of everything the tests start:
// the test binary started again without TAPEDECK_FIXTURE finds it (e2e.Run).
const nestedRun = "TAPEDECK_CLI_TESTS_RUNNING"

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
	// A test binary started by one of its own tests without
	// TAPEDECK_FIXTURE (a tape recorded from a fixture plugin, replayed
	// without the fixture's environment) would run every test again,
	// nested, until the replay gave up on it: 33 s of CPU in one test
	// before this guard. It says so and exits instead, as a plugin that
	// fails at once. A nested go test (the README's line that re-records
	// the bundled tapes) passes -test flags and runs.
	if os.Getenv(nestedRun) != "" && !slices.ContainsFunc(os.Args[1:], func(a string) bool { return strings.HasPrefix(a, "-test.") }) {
		fmt.Fprintf(os.Stderr, "the cli test binary was started as a plugin without TAPEDECK_FIXTURE (%s is set): a fixture tape was replayed without its environment\n", nestedRun)
		return 100
	}
	if err := os.Setenv(nestedRun, "1"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// These tests spend their time waiting for the processes they run
	// (the binary, the plugins), not on the CPU: unless -parallel says
	// otherwise, run three of them for each CPU instead of one.
	if !waittest.PerCPU(3) {
		return 1
	}
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
	if err := os.Chdir(filepath.Join("..", "..")); err != nil {
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
	builtPrograms = &programs{dir: filepath.Join(dir, "programs"), m: map[string]*program{}}
	if bin != "" {
		if err := os.Symlink(bin, tapedeckBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return e.m.Run()
	}
	real := tapedeckBin
	if count := os.Getenv("TAPEDECK_TEST_COUNT"); count != "" {
		// Every start of the binary, by a Go test or a script, is noted
		// (wrap's tests then see the wrapper's folder, not the binary's).
		real = filepath.Join(dir, "tapedeck-real")
		script := "#!/bin/sh\necho binary >> '" + count + "'\nexec " + real + " \"$@\"\n"
		if err := os.WriteFile(tapedeckBin, []byte(script), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	args := []string{"build", "-o", real}
	if race.Enabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	if !race.Enabled { // the race detector needs cgo
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the README installs it: static
	}
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tapedeck:", err)
		return 1
	}
	return e.m.Run()
}
