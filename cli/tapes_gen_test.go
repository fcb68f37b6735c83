package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
// (testdata/plugins/ID/host.jsonl), when run with -update-tapes:
//
//	go test -run TestRecordBundledTapes -update-tapes .
//
// The tapes' working directory is written relative to the tape, so they
// replay from any checkout.
func TestRecordBundledTapes(t *testing.T) {
	t.Parallel()
	if !*updateTapes {
		t.Skip("run with -update-tapes to re-record the bundled tapes")
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
			os.MkdirAll(filepath.Join("testdata", "tapes"), 0o755)
			if err := os.WriteFile(filepath.Join("testdata", "tapes", b.id+".jsonl"), out.Bytes(), 0o644); err != nil {
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
