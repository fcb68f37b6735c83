package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/race"
	"github.com/tapedeck/tapedeck/tape"
)

var updateTapes = flag.Bool("update-tapes", false, "re-record the bundled example tapes in testdata/tapes")

// bundled lists the example plugins whose sessions ship as tapes.
var bundled = []struct {
	id      string
	command []string
}{
	{"hello-python", []string{"python3", "main.py"}},
	{"hello-node", []string{"node", "main.mjs"}},
	{"hello-go", []string{"go", "run", "."}},
	{"waiter-python", []string{"python3", "main.py"}},
	{"waiter-node", []string{"node", "main.mjs"}},
}

// TestRecordBundledTapes re-records testdata/tapes/*.jsonl from the fixture
// plugins through the real binary, each driven by its host script
// (testdata/plugins/ID/host.jsonl), when run with -update-tapes, as the
// README shows (from the module root):
//
//	go test ./internal/cli -run TestRecordBundledTapes -update-tapes
//
// The tapes' working directory is written relative to the tape, so they
// replay from any checkout. TAPEDECK_BUNDLED_TAPES, when set, names the
// folder to write them to instead (TestReadmeUpdateTapes uses it, so as
// not to touch the checkout).
func TestRecordBundledTapes(t *testing.T) {
	t.Parallel()
	if !*updateTapes {
		t.Skip("run with -update-tapes to re-record the bundled tapes")
	}
	tapesDir := filepath.Join("testdata", "tapes")
	if d := os.Getenv("TAPEDECK_BUNDLED_TAPES"); d != "" {
		tapesDir = d
	}
	for _, b := range bundled {
		t.Run(b.id, func(t *testing.T) {
			if _, err := exec.LookPath(b.command[0]); err != nil {
				t.Skipf("%s is not installed", b.command[0])
			}
			store := t.TempDir()
			dir, _ := filepath.Abs(filepath.Join("testdata", "plugins", b.id))
			cmd := exec.Command(tapedeckBin, append([]string{"--store", store, "record", "--name", b.id, "--host", "host.jsonl", "--"}, b.command...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "AGENTTY_PLUGIN_ID="+b.id, "AGENTTY_LANGUAGE=en", "AGENTTY_VERSION=1.9.0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("record %s: %v\n%s", b.id, err, out)
			}
			r := tapedeck(t, store, nil, nil, "export", b.id)
			if r.code != 0 {
				t.Fatalf("export: %s", r.stderr)
			}
			tr, err := tape.NewReader(bytes.NewReader(r.stdout))
			if err != nil {
				t.Fatal(err)
			}
			meta := *tr.Session()
			meta.Cwd = filepath.Join("..", "plugins", b.id)
			var out bytes.Buffer
			tw, _ := tape.NewWriter(&out, &meta)
			for {
				f, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := tw.Write(f); err != nil {
					t.Fatal(err)
				}
			}
			tw.Flush()
			os.MkdirAll(tapesDir, 0o755)
			if err := os.WriteFile(filepath.Join(tapesDir, b.id+".jsonl"), out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBundledTapesAreClean: the example tapes are what a well-behaved
// plugin looks like, so check finds nothing wrong in them.
func TestBundledTapesAreClean(t *testing.T) {
	t.Parallel()
	tapes, _ := filepath.Glob(filepath.Join("testdata", "tapes", "*.jsonl"))
	if len(tapes) == 0 {
		t.Fatal("no bundled tapes")
	}
	for _, tp := range tapes {
		r := tapedeck(t, t.TempDir(), nil, nil, "check", tp)
		if r.code != 0 || !bytes.HasSuffix(r.stdout, []byte("0 errors, 0 warnings, 0 info\n")) {
			t.Errorf("check %s: exit %d\n%s%s", tp, r.code, r.stdout, r.stderr)
		}
	}
}

// TestReadmeUpdateTapes runs the README's line that re-records the
// bundled tapes, exactly as shown, from the module root, with the tapes
// written to a folder of the test's (TAPEDECK_BUNDLED_TAPES) beside the
// fixture plugins: every bundled tape comes back, and tapedeck test
// passes them all.
func TestReadmeUpdateTapes(t *testing.T) {
	t.Parallel()
	if testing.Short() || race.Enabled {
		t.Skip("runs go test on this package again: not with -short or under the race detector")
	}
	readme := []byte(docsText(t))
	const line = "go test ./internal/cli -run TestRecordBundledTapes -update-tapes"
	if !bytes.Contains(readme, []byte("`"+line+"`")) {
		t.Fatalf("README.md does not show `%s`", line)
	}
	ws := t.TempDir()
	plugins, err := filepath.Abs(filepath.Join("testdata", "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(plugins, filepath.Join(ws, "plugins")); err != nil {
		t.Fatal(err)
	}
	tapes := filepath.Join(ws, "tapes")
	args := strings.Fields(line)
	cmd := exec.Command(args[0], args[1:]...)
	// The binary this run built, not another link of the same source.
	cmd.Env = append(os.Environ(), "TAPEDECK_BUNDLED_TAPES="+tapes, "TAPEDECK_TEST_BIN="+tapedeckBin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	var want []string
	for _, b := range bundled {
		if _, err := exec.LookPath(b.command[0]); err == nil {
			want = append(want, b.id+".jsonl")
		}
	}
	got, _ := filepath.Glob(filepath.Join(tapes, "*.jsonl"))
	if len(got) != len(want) {
		t.Fatalf("%s wrote %q, want %q", line, got, want)
	}
	r := tapedeck(t, t.TempDir(), nil, nil, "test", tapes)
	if r.code != 0 || !strings.HasSuffix(string(r.stdout), fmt.Sprintf("%d passed, 0 failed\n", len(want))) {
		t.Errorf("tapedeck test of the re-recorded tapes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
