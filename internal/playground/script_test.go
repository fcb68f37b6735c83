package playground

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/htmlreport"
	"github.com/tapedeck/tapedeck/playback"
)

// TestHostScriptOfABundledTape writes the host script of the bundled
// hello-node tape: every host frame of the tape, in order, each line
// waiting for what the plugin had said before it (by method, or by the
// reply to the host's request), answers where the host answered other
// than null, a pause where the person had read a toast; it reads back as
// a host script.
func TestHostScriptOfABundledTape(t *testing.T) {
	t.Parallel()
	rec, err := playback.ReadTape(filepath.Join("..", "..", "testdata", "tapes", "hello-node.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(HostScript(rec.Frames, "heading"))
	want := `// heading
{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":"hello-node","name":"Hello","version":"1.0.0","dir":"/plugins/hello-node","dataDir":"/data/hello-node"},"language":"en","context":{"workspace":null,"pane":null,"language":"en"}}}
{"jsonrpc":"2.0","method":"panel/open","params":{"context":{"workspace":null,"pane":null,"language":"en"}}}
{"send":{"jsonrpc":"2.0","method":"ui/event","params":{"element":"name","event":"change","value":"Ada","context":{}}},"after":[{"reply":7},"ui/setPanel"]}
{"jsonrpc":"2.0","method":"ui/event","params":{"element":"greet","event":"click","context":{}}}
{"send":{"jsonrpc":"2.0","method":"ui/event","params":{"element":"ask","event":"click","context":{}}},"after":["ui/setPanel","ui/notify"],"pause":"750ms"}
{"answer":"prompt/inject","result":{"status":"asked"},"after":"prompt/inject"}
{"send":{"jsonrpc":"2.0","method":"ui/event","params":{"element":"items","event":"action","item":"b","action":"rm","context":{}}},"after":"ui/notify"}
{"jsonrpc":"2.0","method":"context/changed","params":{"context":{"workspace":null,"pane":null,"language":"de"}}}
{"send":{"jsonrpc":"2.0","method":"shutdown","params":{}},"after":"ui/setBadge"}
`
	if got != want {
		t.Errorf("the host script:\n%s\nwant:\n%s", got, want)
	}
	if _, err := host.ReadScript(strings.NewReader(got)); err != nil {
		t.Errorf("it does not read back as a host script: %v", err)
	}
}

// TestOneRendererForReportAndPlayground: the panel renderer and the
// timeline are one copy, report's, in both the HTML report and the
// playground's page; no other file of the module defines them.
func TestOneRendererForReportAndPlayground(t *testing.T) {
	t.Parallel()
	s := &server{plugin: &Plugin{ID: "x"}}
	page, err := s.page()
	if err != nil {
		t.Fatal(err)
	}
	var rep bytes.Buffer
	if err := htmlreport.Session(&rep, nil, htmlreport.Slice(nil), nil); err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{"function drawPanel(tree, act)", "function drawToast(", "function drawBadge(", "function Timeline(frames, opts)", "Timeline.prototype.append"} {
		if n := bytes.Count(page.html, []byte(def)); n != 1 {
			t.Errorf("the playground's page has %d copies of %q, want 1", n, def)
		}
		if n := bytes.Count(rep.Bytes(), []byte(def)); n != 1 {
			t.Errorf("the report has %d copies of %q, want 1", n, def)
		}
	}
	var where []string
	filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".." || d.Name() == "node_modules") {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(path, ".js") {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("function drawPanel(")) {
				where = append(where, path)
			}
		}
		return nil
	})
	if len(where) != 1 || where[0] != filepath.Join("..", "htmlreport", "assets", "panel.js") {
		t.Errorf("drawPanel is defined in %v, want only internal/htmlreport/assets/panel.js", where)
	}
}
