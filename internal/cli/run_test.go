package cli

// Running tapedeck from the tests: in process where the command needs no
// process of its own, else the real binary.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tapedeck/tapedeck/internal/race"
)

// result is one finished tapedeck invocation.
type result struct {
	stdout, stderr []byte
	code           int
}

// tapedeck runs a tapedeck command with the store, stdin and variables
// (added to ours) given and waits for it: in process when it can
// (inProcess), else the real binary.
func tapedeck(t *testing.T, store string, stdin []byte, env []string, args ...string) result {
	t.Helper()
	if inProcess(env, args) {
		return tapedeckInProcess(t, store, stdin, env, args...)
	}
	return tapedeckBinary(t, store, stdin, env, args...)
}

// inProcessCommands are the commands a test may run in process: each
// starts no process of its own but the plugin (review reads keys from a
// terminal; wrap writes launchers that exec the binary; the tests that
// signal or kill a recording shim start the binary themselves).
var inProcessCommands = map[string]bool{
	"record": true, "replay": true, "test": true, "diff": true, "shrink": true, "check": true, "coverage": true,
	"show": true, "ls": true, "export": true, "import": true, "rm": true, "gc": true, "verify": true,
}

// raceInProcess are the commands that run in process under the race
// detector too, one at a time (inProcessTurn): urfave/cli v2 keeps its
// help flag, version flag and help command in package variables that
// every App writes while it parses flags, so apps side by side in one
// process race there. They are the short ones, which read a store or a
// tape and are done: in process, the race-built test binary's detector
// watches their code as closely as in a race-built binary, without a
// race-built process's start for each of the 400 or so runs (half the
// command runs of cli's race run). A recording or a replay would hold
// its turn for seconds, and its process tree is what the race run is
// for: those run as race-built binaries.
var raceInProcess = map[string]bool{
	"diff": true, "check": true, "coverage": true, "show": true, "ls": true,
	"export": true, "import": true, "rm": true, "gc": true, "verify": true,
}

// inProcessTurn is held by a command run in process under the race
// detector (see raceInProcess).
var inProcessTurn sync.Mutex

// inProcess reports whether a command can run in process: it is one of
// inProcessCommands, the variables it is given are only those the
// command layer reads from its environment (or a fixture plugin's), and
// no other build is under test (TAPEDECK_TEST_BIN).
func inProcess(env, args []string) bool {
	if os.Getenv("TAPEDECK_TEST_BIN") != "" || len(args) == 0 || !inProcessCommands[args[0]] {
		return false
	}
	if race.Enabled && !raceInProcess[args[0]] {
		return false
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "FIXTURE_"), k == "TAPEDECK_FIXTURE", k == "TAPEDECK_REDACT_KEY", k == "CI":
		default:
			return false // COLUMNS, NO_COLOR, TZ, …: read by code that looks at the process's own environment
		}
	}
	return true
}

// tapedeckInProcess runs the command through the command layer's run in
// this process, in an environment of its own.
func tapedeckInProcess(t *testing.T, store string, stdin []byte, env []string, args ...string) result {
	t.Helper()
	in, err := os.Open(os.DevNull)
	if stdin != nil {
		path := filepath.Join(t.TempDir(), "stdin")
		if err = os.WriteFile(path, stdin, 0o600); err == nil {
			in, err = os.Open(path)
		}
	}
	if err != nil { // Errorf, not Fatal: tapedeckMany calls this from goroutines
		t.Errorf("stdin for tapedeck %v: %v", args, err)
		return result{code: -1}
	}
	defer in.Close()
	countRun("in-process")
	if race.Enabled {
		inProcessTurn.Lock()
		defer inProcessTurn.Unlock()
	}
	var out, errb bytes.Buffer
	code := run(append([]string{"tapedeck", "--store", store}, args...), in, &out, &errb, append(os.Environ(), env...))
	return result{stdout: out.Bytes(), stderr: errb.Bytes(), code: code}
}

// tapedeckBinary runs the binary with the store and stdin given and waits
// for it.
func tapedeckBinary(t *testing.T, store string, stdin []byte, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(tapedeckBin, append([]string{"--store", store}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return runCommand(t, cmd)
}

// runCommand runs cmd (tapedeck, or a shell that execs it) to its end and
// returns what it printed and its exit status; a command that cannot be
// run at all fails the test.
func runCommand(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.Bytes(), stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return r
}

// tapedeckMany runs n copies of one tapedeck command at once and returns
// their results: the proofs that a replay passes every time run their
// plugins side by side.
func tapedeckMany(t *testing.T, n int, env []string, args ...string) []result {
	t.Helper()
	results := make([]result, n)
	if inProcess(env, args) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = tapedeckInProcess(t, t.TempDir(), nil, env, args...)
			}()
		}
		wg.Wait()
		return results
	}
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

// countRun notes one run of tapedeck in the file $TAPEDECK_TEST_COUNT
// names, when it is set: how a test run splits between in-process calls
// and binaries (which the binary's wrapper notes, see main_test.go).
func countRun(how string) {
	if path := os.Getenv("TAPEDECK_TEST_COUNT"); path != "" {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
			f.WriteString(how + "\n")
			f.Close()
		}
	}
}
