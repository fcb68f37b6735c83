package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// TestJSONOutputsEscapeHiddenCharacters: ls --json, show --json and check
// --json used to print a plugin's bidi overrides and C1 controls raw
// (U+202E reverses what follows on screen; U+009B starts a terminal escape
// on some terminals), as the human output never did. Now they are \u
// escapes, and the JSON decodes to the same values.
func TestJSONOutputsEscapeHiddenCharacters(t *testing.T) {
	t.Parallel()
	const evil = "a\u202eb\u009b31mc"
	dir := t.TempDir()
	putSessions(t, dir, 1, func(int) (frame.Session, []frame.Frame) {
		m, f := fakeSession("bidi"+evil, "p", time.Now())
		f[2].Raw = []byte("stderr " + evil)
		f = append(f[:3], frame.Frame{Seq: 5, At: 2500, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","method":"ui/` + evil + `","params":{"t":"` + evil + `"}}`)}, f[3])
		f[4].Seq = 6
		return m, f
	})
	for _, args := range [][]string{{"ls", "--json"}, {"show", "--json", "last"}, {"check", "--json", "last"}} {
		r := tapedeck(t, dir, nil, nil, args...)
		if r.code > 1 {
			t.Fatalf("%s: exit %d: %s", args, r.code, r.stderr)
		}
		if bytes.Contains(r.stdout, []byte("\u202e")) || bytes.Contains(r.stdout, []byte("\u009b")) {
			t.Errorf("%s prints U+202E or U+009B raw:\n%s", args, r.stdout)
		}
		if !bytes.Contains(r.stdout, []byte(`\u202e`)) {
			t.Errorf("%s: no \\u202e escape in %s", args, r.stdout)
		}
		dec := json.NewDecoder(bytes.NewReader(r.stdout))
		found := false
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%s: not JSON: %v", args, err)
				}
				break
			}
			js, _ := json.Marshal(v)
			found = found || strings.Contains(string(js), evil) || strings.Contains(string(js), `a\u202eb`)
		}
		if !found {
			t.Errorf("%s: no value decodes to the original text", args)
		}
	}
}
