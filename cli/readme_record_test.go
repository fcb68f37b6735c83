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
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Record a plugin by hand\n")
	if !ok {
		t.Fatal("README.md has no \"Record a plugin by hand\" section")
	}
	_, block, _ := strings.Cut(section, "```console\n")
	block, _, _ = strings.Cut(block, "```")

	// The block: commands ("$ " and their continuation lines), each
	// followed by what it printed.
	type step struct {
		command string
		output  []string
	}
	var steps []step
	continued := false
	for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, step{command: strings.TrimPrefix(line, "$ ")})
		case continued:
			steps[len(steps)-1].command += "\n" + line
		case len(steps) > 0:
			steps[len(steps)-1].output = append(steps[len(steps)-1].output, line)
		}
		continued = strings.HasSuffix(line, "\\") || strings.HasSuffix(line, "|")
	}
	if len(steps) != 2 || !strings.Contains(steps[0].command, "tapedeck record --name first") || steps[1].command != "tapedeck ls" {
		t.Fatalf("README's first recording is not a record and an ls: %q", steps)
	}

	env := append(os.Environ(), "TAPEDECK_STORE="+filepath.Join(t.TempDir(), "store"),
		"PATH="+filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
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
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(got) != len(steps[0].output) {
		t.Errorf("record printed %q, the README shows %q", got, steps[0].output)
	}
	for _, want := range steps[0].output {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("record printed no %q:\n%s", want, out)
		}
	}

	ls := strings.Split(strings.TrimSuffix(run(steps[1].command), "\n"), "\n")
	shown := steps[1].output
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
