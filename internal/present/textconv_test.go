package present

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/smallfile"
	"github.com/tapedeck/tapedeck/tape"
)

// encoderBody is a frame's body as Textconv wrote it before depth was
// capped: encoding/json's indentation, without HTML escapes.
func encoderBody(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// deepTape is a tape of one ui/setPanel whose tree nests depth columns,
// two levels of JSON each.
func deepTape(depth int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tapedeck":1,"session":{"id":"01m8qsqc402dhc5g9w502y9gqp","name":"deep","command":["x"],"cwd":".","status":"complete","exit":{"code":0},"frames":{"in":0,"out":1,"err":0}}}` + "\n")
	b.WriteString(`{"seq":1,"at":0,"dir":"out","json":{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":`)
	for range depth {
		b.WriteString(`{"type":"column","children":[`)
	}
	b.WriteString(`{"type":"text","text":"leaf"}`)
	for range depth {
		b.WriteString(`]}`)
	}
	b.WriteString("}}}\n")
	return b.Bytes()
}

// TestTextconvIsLinearInDepth: a tape of one frame nested as deeply as
// encoding/json decodes (155 KB) printed 249 MB in 10 s, its indentation
// growing with the depth; now it prints about its size, fast, and twice
// the depth prints about twice as much.
func TestTextconvIsLinearInDepth(t *testing.T) {
	const depth = 4985 // 2 levels each: as deep as encoding/json decodes
	out := func(depth int) (in, out int, took time.Duration) {
		data := deepTape(depth)
		var b bytes.Buffer
		start := time.Now()
		if err := Textconv(&b, data); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		took = time.Since(start)
		if !strings.Contains(b.String(), `"leaf"`) {
			t.Fatalf("depth %d: the innermost value is not shown:\n%.1000s", depth, b.String())
		}
		return len(data), b.Len(), took
	}
	in, full, took := out(depth)
	_, half, _ := out(depth / 2)
	t.Logf("tape %d bytes: textconv %d bytes in %v (%d at half the depth)", in, full, took, half)
	if full > 3*in {
		t.Errorf("textconv printed %d bytes for a %d-byte tape: want at most 3 times its size", full, in)
	}
	if float64(full) > 2.5*float64(half) {
		t.Errorf("textconv printed %d bytes at depth %d, %d at depth %d: want about twice, not four times", full, depth, half, depth/2)
	}
	if took > 2*time.Second {
		t.Errorf("textconv of a %d-byte tape took %v: want well under a second", in, took)
	}
}

// TestTextconvBodiesAsBefore: every frame of the bundled tapes and of
// check's rule tapes, and a value nested as deep as the cap, is printed
// byte for byte as encoding/json indented it.
func TestTextconvBodiesAsBefore(t *testing.T) {
	var paths []string
	for _, g := range []string{"../../testdata/tapes/*.jsonl", "../check/testdata/rules/*.jsonl"} {
		ps, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, ps...)
	}
	if len(paths) < 10 {
		t.Fatalf("found %d tapes: %v", len(paths), paths)
	}
	frames := 0
	check := func(name string, raw []byte) {
		t.Helper()
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		if got, want := string(jsonBody(v)), encoderBody(t, v); got != want {
			t.Errorf("%s: textconv body\n%s\nwant\n%s", name, got, want)
		}
		frames++
	}
	for _, p := range paths {
		data, err := smallfile.ReadRegular(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := tape.ReadFile(data)
		if err != nil {
			continue // not a tape
		}
		for i := range f.Frames {
			check(fmt.Sprintf("%s frame %d", p, i+1), f.Frames[i].Raw)
		}
	}
	nested := `"x"`
	for range diff.MaxDepth / 2 { // two levels each: as deep as it indents
		nested = `{"a":[1,` + nested + `],"b":{}}`
	}
	check("nested to the cap", []byte(nested))
	check("escapes", []byte(`{"<&>":"\u2028\u0001é\ud83d\ude00","n":-1.50e3,"e":[],"o":{},"t":true,"z":null}`))
	t.Logf("%d frames compared", frames)
	if frames < 50 {
		t.Errorf("compared %d frames: want the tapes' frames", frames)
	}
}
