package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordLint records a plugin that shows two notifications at once with
// --lint: the finding goes to the lint file (never to the plugin's stderr)
// and is stored with the session, where show marks its frame.
func TestRecordLint(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	lintFile := filepath.Join(t.TempDir(), "lint.jsonl")
	input := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"mini"}}}
{"jsonrpc":"2.0","method":"panel/open","params":{}}
{"jsonrpc":"2.0","method":"ui/event","params":{"element":"go","event":"click"}}
{"jsonrpc":"2.0","method":"shutdown","params":{}}
`)
	argv, env := fixture("mini", "FIXTURE_EXTRA=1")
	r := tapedeck(t, store, input, env, append([]string{"record", "--lint", lintFile}, argv...)...)
	if r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	if bytes.Contains(r.stderr, []byte("notify-dropped")) {
		t.Errorf("a finding reached the plugin's stderr: %s", r.stderr)
	}
	b, err := os.ReadFile(lintFile)
	if err != nil {
		t.Fatal(err)
	}
	var dropped struct {
		Session string `json:"session"`
		Rule    string `json:"rule"`
		Seq     uint64 `json:"seq"`
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l struct {
			Session string `json:"session"`
			Rule    string `json:"rule"`
			Seq     uint64 `json:"seq"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("lint line %q: %v", sc.Text(), err)
		}
		if l.Rule == "notify-dropped" {
			dropped = l
		}
	}
	if dropped.Rule == "" || dropped.Session == "" {
		t.Fatalf("no notify-dropped finding in the lint file:\n%s", b)
	}
	show := tapedeck(t, store, nil, nil, "show", "last")
	if !strings.Contains(string(show.stdout), "⚑ error notify-dropped") {
		t.Errorf("show does not mark the frame:\n%s", show.stdout)
	}
	js := tapedeck(t, store, nil, nil, "show", "last", "--json")
	found := false
	for _, line := range strings.Split(string(js.stdout), "\n") {
		var f struct {
			Seq      uint64 `json:"seq"`
			Findings []struct {
				Rule string `json:"rule"`
			} `json:"findings"`
		}
		if json.Unmarshal([]byte(line), &f) == nil && f.Seq == dropped.Seq && len(f.Findings) > 0 && f.Findings[0].Rule == "notify-dropped" {
			found = true
		}
	}
	if !found {
		t.Errorf("show --json has no finding on frame %d:\n%s", dropped.Seq, js.stdout)
	}
}
