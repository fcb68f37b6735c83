package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/race"
)

// TestReadmeWrapWalk runs the README's "Capture a session in Agentty" walk
// in a copy of hello-node, every command exactly as shown, in bash, from
// inside the plugin folder (the walk's first line, cd path/to/hello-node,
// is where the test starts): wrap, doctor, a session as the host runs it,
// ls, show, export, replay, test with no folder, unwrap. What each prints
// is checked line by line against what the README shows, with the
// README's paths (/Users/me/…, /opt/homebrew/…) read as this machine's;
// the session id the README names by its prefix (01JD7W4S) is this
// run's.
func TestReadmeWrapWalk(t *testing.T) {
	t.Parallel()
	if race.Enabled {
		t.Skip("the walk repeats what the wrap tests cover; under the race detector it only costs time")
	}
	bin, home, shell, node := nodeThroughBin(t)
	dir := copyPlugin(t, "hello-node")
	store := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(store, 0o700); err != nil { // a store in use, as the README's
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "TAPEDECK_STORE" && k != "HOME" && k != "SHELL" && k != "PATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "TAPEDECK_STORE="+store, "HOME="+home, "SHELL="+shell, "PATH="+bin+":"+filepath.Dir(tapedeckBin)+":"+os.Getenv("PATH"))

	// The README's paths, as this machine's.
	paths := strings.NewReplacer(
		"/Users/me/plugins/hello-node", dir,
		"/Users/me/Library/Application Support/tapedeck", store,
		"'/Users/me/Library/Application Support/tapedeck'", store,
		"/opt/homebrew/bin/tapedeck", tapedeckBin,
		"/opt/homebrew/bin/node", node,
		"/opt/homebrew/bin", bin,
	)
	var id string
	run := func(heading string) {
		t.Helper()
		steps := consoleSteps(t, heading)
		if len(steps) == 0 {
			t.Fatalf("%s: no commands", heading)
		}
		for _, s := range steps {
			if strings.HasPrefix(s.command, "cd path/to/hello-node") {
				continue // the test is there
			}
			command := s.command
			if id != "" {
				command = strings.ReplaceAll(command, "01JD7W4S", id[:8])
			}
			cmd := exec.Command("bash", "-c", command)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			t.Logf("$ %s\n%s", command, out)
			if err != nil {
				t.Fatalf("%s: %v\n%s", command, err, out)
			}
			var shown []string
			for _, l := range s.shown {
				shown = append(shown, paths.Replace(l))
			}
			if strings.HasPrefix(command, "tapedeck ls") && len(shown) == 2 {
				// The row: this run's id, start, duration and counts.
				shown = shown[:1]
				if !strings.Contains(string(out), "  hello-node  hello-node@1.0.0  ") || !strings.Contains(string(out), "complete  0\n") {
					t.Errorf("%s: no complete hello-node@1.0.0 session:\n%s", command, out)
				}
			}
			if line, ok := shownIn(shown, string(out)); !ok {
				t.Errorf("%s printed no %q where the README shows it:\n%s", command, line, out)
			}
		}
	}

	run("### 1. Wrap the plugin")
	run("### 2. Check it")
	// 3. Use the plugin: the host runs the launcher, a session is recorded.
	sent, got := hostSession(t, dir, "hello-node", t.TempDir())
	list := lsJSON(t, store)
	if len(list) != 1 {
		t.Fatalf("%d sessions after the host's, want 1", len(list))
	}
	id = list[0].ID
	checkRecorded(t, store, dir, "hello-node", []string{node, filepath.Join(dir, "main.mjs")}, sent, got)
	run("### 4. Look at what was said")
	run("### 5. Keep a golden tape")
	run("### 6. Unwrap")
	if _, err := os.Stat(filepath.Join(dir, "testdata", "tapes", "hello-panel.jsonl")); err != nil {
		t.Errorf("the golden tape: %v", err)
	}
}
