package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/message"
)

// request is a plugin request line with the given params.
func request(params []byte) []byte {
	return append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":`), params...), '}')
}

// checkAgreement fails when replay's matching and diff's equality disagree
// on params a and b: a recorded request with params a takes a live one with
// params b as the same exactly when diff finds the two request lines the
// same. Params that are not one JSON value make no request line, and are
// not compared.
func checkAgreement(t *testing.T, a, b []byte) {
	t.Helper()
	if !json.Valid(a) || !json.Valid(b) {
		return
	}
	recorded := []frame.Frame{{Seq: 1, Dir: frame.Out, Raw: request(a)}}
	live := []frame.Frame{{Seq: 1, Dir: frame.Out, Raw: request(b)}}
	m := message.Parse(live[0].Raw)
	if m.Kind != message.Request || message.Parse(recorded[0].Raw).Kind != message.Request {
		t.Fatalf("%q or %q makes no request", recorded[0].Raw, live[0].Raw)
	}
	c, differs := makePlan(recorded, Reading{}).match(m.ID, m.Method, m.Params, nil)
	if c == nil {
		t.Fatalf("params %q: the recorded call was not taken at all", b)
	}
	res := diff.Frames(recorded, live, diff.Options{})
	if differs == res.Same() {
		t.Fatalf("params %q and %q: replay's matching says same %v, diff says same %v", a, b, !differs, res.Same())
	}
}

// respell spells the JSON value a in other ways that mean the same value:
// compacted, indented, as encoding/json writes it back (members sorted,
// HTML characters escaped), and oddly (members in reverse order, every
// character of every string as a \u escape).
func respell(a []byte) [][]byte {
	var out [][]byte
	var b bytes.Buffer
	if json.Compact(&b, a) == nil {
		out = append(out, bytes.Clone(b.Bytes()))
	}
	b.Reset()
	if json.Indent(&b, a, "", "\t") == nil {
		out = append(out, bytes.Clone(b.Bytes()))
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.ToValidUTF8(a, []byte("\uFFFD"))))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out
	}
	if m, err := json.Marshal(v); err == nil {
		out = append(out, m)
	}
	return append(out, odd(nil, v))
}

func odd(dst []byte, v any) []byte {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		dst = append(dst, "{ "...)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, " , "...)
			}
			dst = append(oddString(dst, k), " : "...)
			dst = odd(dst, v[k])
		}
		return append(dst, " }"...)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ",\n"...)
			}
			dst = odd(dst, e)
		}
		return append(dst, ']')
	case string:
		return oddString(dst, v)
	case json.Number:
		return append(dst, v...)
	}
	m, _ := json.Marshal(v) // true, false, null
	return append(dst, m...)
}

func oddString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, u := range utf16.Encode([]rune(s)) {
		dst = fmt.Appendf(dst, `\u%04X`, u)
	}
	return append(dst, '"')
}

// agreementCorpus is diff's FuzzCanonical corpus (testdata/fuzz of package
// diff), and the JSONTestSuite files when the corpus is there
// (../shared/corpora beside the repository).
func agreementCorpus(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	dir := filepath.Join("..", "diff", "testdata", "fuzz", "FuzzCanonical")
	files, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatalf("diff's FuzzCanonical corpus: %v", err)
	}
	for _, fi := range files {
		v, err := readCorpusString(filepath.Join(dir, fi.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, v)
	}
	dir = filepath.Join("..", "..", "..", "shared", "corpora", "JSONTestSuite", "test_parsing")
	files, err = os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		tb.Logf("no JSONTestSuite corpus at %s: diff's corpus only", dir)
		return out
	}
	if err != nil {
		tb.Fatalf("read the JSONTestSuite corpus: %v", err)
	}
	for _, fi := range files {
		b, err := os.ReadFile(filepath.Join(dir, fi.Name()))
		if err != nil {
			tb.Fatalf("read the JSONTestSuite corpus: %v", err)
		}
		out = append(out, b)
	}
	return out
}

// readCorpusString reads a fuzz corpus file of one string.
func readCorpusString(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("%s: not a fuzz corpus file of one value", name)
	}
	q, ok1 := strings.CutPrefix(lines[1], "string(")
	q, ok2 := strings.CutSuffix(q, ")")
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: not a string value", name)
	}
	s, err := strconv.Unquote(q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []byte(s), nil
}

// TestMatchingAgreesWithDiff holds replay's matching of params to diff's
// equality on every pair of corpus values, and on every corpus value and
// each other spelling of it.
func TestMatchingAgreesWithDiff(t *testing.T) {
	t.Parallel()
	var values [][]byte
	for _, v := range agreementCorpus(t) {
		if json.Valid(v) {
			values = append(values, v)
		}
	}
	if len(values) < 10 {
		t.Fatalf("only %d valid values in the corpus", len(values))
	}
	for i, a := range values {
		for j, b := range values[i:] {
			// Every pair of small values; a large one (some corpus files
			// are 100 KB deep) against its neighbours, not all of them.
			if len(a)+len(b) <= 8<<10 || j < 3 {
				checkAgreement(t, a, b)
			}
		}
		for _, r := range respell(a) {
			checkAgreement(t, a, r)
			checkAgreement(t, r, a)
		}
	}
	// Spellings that differ in what both must tell apart.
	for _, c := range [][2]string{{`1`, `1.0`}, {`{"a":1}`, `{"a":1,"b":null}`}, {`"a"`, `"a "`}, {`[1,2]`, `[2,1]`}} {
		checkAgreement(t, []byte(c[0]), []byte(c[1]))
	}
}

// FuzzMatchAgreesWithDiff: replay's matching and diff's equality agree on
// any two params, and on any params and other spellings of them.
func FuzzMatchAgreesWithDiff(f *testing.F) {
	var corpus [][]byte
	for _, a := range agreementCorpus(f) {
		if len(a) <= 4096 { // mutating the large ones only slows the fuzzer
			corpus = append(corpus, a)
		}
	}
	for i, a := range corpus {
		f.Add(string(a), string(corpus[(i+1)%len(corpus)]))
		if r := respell(a); len(r) > 0 {
			f.Add(string(a), string(r[len(r)-1]))
		}
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		checkAgreement(t, []byte(a), []byte(b))
		for _, r := range respell([]byte(a)) {
			checkAgreement(t, []byte(a), r)
		}
	})
}
