package playground

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFreshDirTooLarge: a --fresh-dir folder past what a tape carries
// stops play at once, saying which, how large it may be, and what to do.
func TestFreshDirTooLarge(t *testing.T) {
	t.Parallel()
	big := t.TempDir()
	for i := range 2001 {
		os.WriteFile(filepath.Join(big, fmt.Sprintf("f%d", i)), nil, 0o644)
	}
	homes, err := makeHomes([]string{"COSMICA_HOME"}, []string{"COSMICA_HOME=" + big})
	defer removeHomes(homes)
	want := "--fresh-dir COSMICA_HOME: the playground starts the plugin from a copy of the folder COSMICA_HOME names, which a tape carries beside it: " + big + " holds more than 16 MiB or 2000 files: larger than a copy may be; point COSMICA_HOME at a folder that holds only what the plugin needs to start"
	if err == nil || err.Error() != want {
		t.Errorf("makeHomes of a large folder: %v\nwant %s", err, want)
	}
	for _, bad := range []string{"HOME", "PATH", "AGENTTY_PLUGIN_DATA", "A-B", ""} {
		if _, err := makeHomes([]string{bad}, nil); err == nil || !strings.HasPrefix(err.Error(), "--fresh-dir ") {
			t.Errorf("--fresh-dir %q: %v, want refused", bad, err)
		}
	}
}

// TestKeepRefusesATooLargeStart: a plugin that fills its data folder past
// what a tape carries makes the next run's start too large to keep: the
// terminal says so as the run starts, and Keep it refuses with the reason
// and what to do, the tape not written and the session left running.
func TestKeepRefusesATooLargeStart(t *testing.T) {
	t.Parallel()
	script := `while IFS= read -r l; do case "$l" in
*'"initialize"'*) echo '{"jsonrpc":"2.0","id":1,"result":{}}';;
*'"fill"'*) i=0; while [ $i -le 2000 ]; do : > "$AGENTTY_PLUGIN_DATA/f$i"; i=$((i+1)); done; echo '{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"filled"}}';;
*'"shutdown"'*) exit 0;;
esac; done`
	dir := t.TempDir()
	p := play(t, dir, func(o *Options) { o.Command = []string{"sh", "-c", script} })
	ev := p.follow(t)
	ev.says(t, `"id":1`)
	p.post(t, `{"do":"ui","element":"fill","event":"click"}`)
	ev.says(t, "filled")
	if status, res := p.post(t, `{"do":"restart"}`); status != 200 {
		t.Fatalf("restart: %d %v", status, res)
	}
	if !waitUntil(20*time.Second, func() bool { return strings.Contains(p.log.String(), "run 2: ") }) {
		t.Fatalf("the terminal did not say run 2's start is too large:\n%s", p.log)
	}
	if line := p.log.String(); !strings.Contains(line, "holds more than 16 MiB or 2000 files: larger than a copy may be: Keep it cannot carry what this session starts from beside its tape (it carries at most 16 MiB or 2000 files)") {
		t.Errorf("the terminal says:\n%s", line)
	}
	status, res := p.post(t, `{"do":"keep","name":"big"}`)
	msg, _ := res["error"].(string)
	if status != 400 || !strings.HasPrefix(msg, "keep: what the session started from cannot be kept beside its tape: ") || !strings.Contains(msg, "Make the plugin's folders smaller") {
		t.Errorf("keep of a session that started too large: %d %v", status, res)
	}
	if _, err := os.Stat(filepath.Join(dir, "tapes", "big.jsonl")); err == nil {
		t.Error("the tape was written")
	}
	// The session is left running: the plugin still answers.
	p.post(t, `{"do":"ui","element":"fill","event":"click"}`)
	ev.says(t, "filled")
}
