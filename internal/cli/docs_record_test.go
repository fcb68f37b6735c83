package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeRecordByHand runs the README's first recording ("Record a
// plugin by hand"), its shell pipeline exactly as shown, from the module
// root into a fresh store, and then its tapedeck ls: the plugin's output
// is what the README shows, and ls lists the session with the columns and
// counts shown (its id, start time and duration are this run's).
func TestReadmeRecordByHand(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	steps := consoleSteps(t, "## Record a plugin by hand")
	if len(steps) != 2 || !strings.Contains(steps[0].command, "tapedeck record --name first") || steps[1].command != "tapedeck ls" {
		t.Fatalf("README's first recording is not a record and an ls: %q", steps)
	}

	env := append(os.Environ(), "TAPEDECK_STORE="+filepath.Join(t.TempDir(), "store"), pathWithTapedeck())
	run := func(command string) string {
		t.Helper()
		cmd := exec.Command("bash", "-c", "set -o pipefail\n"+command)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", command, err, out)
		}
		return string(out)
	}

	out := run(steps[0].command)
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(got) != len(steps[0].shown) {
		t.Errorf("record printed %q, the README shows %q", got, steps[0].shown)
	}
	for _, want := range steps[0].shown {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("record printed no %q:\n%s", want, out)
		}
	}

	ls := strings.Split(strings.TrimSuffix(run(steps[1].command), "\n"), "\n")
	shown := steps[1].shown
	if len(ls) != 2 || len(shown) != 2 {
		t.Fatalf("ls printed %q, the README shows %q", ls, shown)
	}
	if ls[0] != shown[0] {
		t.Errorf("ls header %q, the README shows %q", ls[0], shown[0])
	}
	// The row with this run's id, start and duration in the shown one's
	// place; the duration may be longer here, under load.
	row := regexp.MustCompile(`^[0-9a-z]{26}  first  hello-python  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  [0-9.]+m?s +2 +1 +2 +complete +0$`)
	if !row.MatchString(shown[1]) {
		t.Fatalf("the README's ls row %q is not the row this test knows", shown[1])
	}
	if !row.MatchString(ls[1]) {
		t.Errorf("ls row %q, the README shows %q", ls[1], shown[1])
	}
}
