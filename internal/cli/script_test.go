package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command line's behaviours written as scripts, one
// per file in cli/testdata/script (see testscript's documentation for the
// language). In them:
//
//   - tapedeck is the real binary (TestMain builds it);
//   - fixture MODE is the test binary as one of fixture_test.go's plugins;
//   - exits N COMMAND [ARGS…] runs a command and fails unless its exit
//     status is N (its stdout and stderr are then matched as exec's are);
//   - $ROOT is the module root (testdata/ holds the bundled plugins and
//     tapes), $TAPEDECK_STORE a store in the script's own folder, TZ is UTC;
//   - [exec:node] and [exec:python3] guard what needs the bundled Node and
//     Python plugins, which skip with the reason where they are missing.
func TestScripts(t *testing.T) {
	t.Parallel()
	root, err := os.Getwd() // TestMain made it the module root
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join(root, "internal", "cli", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("ROOT", root)
			env.Setenv("TAPEDECK_STORE", filepath.Join(env.WorkDir, "store"))
			env.Setenv("TZ", "UTC")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": exits,
		},
		RequireExplicitExec: true,
	})
}

// exits N COMMAND [ARGS…] runs COMMAND and fails unless it exits with
// status N.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits (say the status that is expected)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits N COMMAND [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits %q: not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
