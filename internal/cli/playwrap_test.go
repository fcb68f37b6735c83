package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/playback"
)

// TestPlayInAWrappedFolder: play in a folder tapedeck wrap wrapped runs
// the plugin's own command (from the manifest wrap keeps), never the
// launcher: the kept tape names node main.mjs, no session but the
// playground's own is stored, and after unwrap the tape still runs, not
// skipped, and a test stores nothing.
func TestPlayInAWrappedFolder(t *testing.T) {
	t.Parallel()
	bin, home, shell, _ := nodeThroughBin(t)
	dir := copyPlugin(t, "hello-node")
	store := t.TempDir()
	env := []string{"HOME=" + home, "SHELL=" + shell, "PATH=" + bin + ":" + filepath.Dir(tapedeckBin) + ":" + os.Getenv("PATH")}
	run := func(args ...string) result {
		t.Helper()
		cmd := exec.Command(tapedeckBin, append([]string{"--store", store}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		return runCommand(t, cmd)
	}
	if r := run("wrap"); r.code != 0 {
		t.Fatalf("wrap: exit %d %s", r.code, r.stderr)
	}
	sessions := func() int {
		t.Helper()
		r := run("ls", "--json")
		var list []json.RawMessage
		if err := json.Unmarshal(r.stdout, &list); err != nil {
			t.Fatalf("ls --json: %v\n%s", err, r.stdout)
		}
		return len(list)
	}
	p := startPlay(t, dir, store, "tapedeck play", env...)
	p.waitFrame(t, `"method":"ui/setPanel"`)
	p.do(t, `{"do":"ui","element":"greet","event":"click"}`)
	p.waitFrame(t, `Hello, world!`)
	if k := p.do(t, `{"do":"keep","name":"greet"}`); k["same"] != true {
		t.Errorf("keep: %v", k)
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "is wrapped (tapedeck wrap): the playground runs the plugin's own command, node main.mjs, not the launcher") {
		t.Errorf("play did not say it runs the plugin's own command:\n%s", p.stderr)
	}
	rec, err := playback.ReadTape(filepath.Join(dir, "tapes", "greet.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.Meta.Command, []string{"node", "main.mjs"}) {
		t.Errorf("the kept tape runs %q, want node main.mjs", rec.Meta.Command)
	}
	stored := sessions()
	if stored != 2 { // the session kept, and the run started afresh after it
		t.Errorf("%d sessions stored, want the playground's 2: the launcher recorded too", stored)
	}
	if r := run("unwrap"); r.code != 0 {
		t.Fatalf("unwrap: exit %d %s", r.code, r.stderr)
	}
	r := run("test")
	if r.code != 0 || !strings.Contains(string(r.stdout), "ok    tapes/greet.jsonl") || strings.Contains(string(r.stdout), "skip") {
		t.Errorf("test after unwrap: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := sessions(); n != stored {
		t.Errorf("test stored %d sessions", n-stored)
	}
}
