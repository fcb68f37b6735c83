package tape

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

func testSession() *frame.Session {
	code := 0
	ended := time.Date(2025, 3, 1, 12, 0, 5, 123456789, time.UTC)
	return &frame.Session{
		ID:       "01jn0000000000000000000000",
		Name:     "smoke <&> \u2028",
		Tags:     map[string]string{"b": "2", "a": "1"},
		Command:  []string{"node", "main.mjs"},
		Cwd:      "/tmp/plugin",
		Env:      map[string]string{"AGENTTY_API": "1"},
		Plugin:   frame.Plugin{ID: "p", Name: "Plugin", Version: "1.0.0"},
		Started:  time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("", 3600)),
		Ended:    &ended,
		Status:   frame.StatusComplete,
		Exit:     frame.Exit{Code: &code},
		Tapedeck: "dev",
	}
}

// export writes a tape of frames.
func export(t testing.TB, sess *frame.Session, frames []frame.Frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sess)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for i := range frames {
		if err := w.Write(&frames[i]); err != nil {
			t.Fatalf("Write(frame %d): %v", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	return buf.Bytes()
}

// readAll reads a whole tape, copying each frame out of the Reader.
func readAll(r io.Reader) (*frame.Session, []frame.Frame, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	var frames []frame.Frame
	for {
		f, err := tr.Next()
		if err == io.EOF {
			return tr.Session(), frames, nil
		}
		if err != nil {
			return tr.Session(), frames, err
		}
		frames = append(frames, clone(f))
	}
}

func clone(f *frame.Frame) frame.Frame {
	c := *f
	if f.Raw != nil {
		c.Raw = bytes.Clone(f.Raw)
	}
	if f.Cut != nil {
		cut := *f.Cut
		c.Cut = &cut
	}
	if code := f.Code(); code != nil {
		n := *code
		c.SetEnd(f.Signal(), &n)
	}
	return c
}

// diffFrame describes how got differs from want, or returns "".
func diffFrame(got, want *frame.Frame) string {
	var d []string
	if got.Seq != want.Seq || got.At != want.At || got.Dir != want.Dir {
		d = append(d, fmt.Sprintf("seq/at/dir = %d/%d/%v, want %d/%d/%v",
			got.Seq, got.At, got.Dir, want.Seq, want.At, want.Dir))
	}
	if !bytes.Equal(got.Raw, want.Raw) {
		d = append(d, fmt.Sprintf("raw = %s, want %s", short(got.Raw), short(want.Raw)))
	}
	if got.NoEOL != want.NoEOL {
		d = append(d, fmt.Sprintf("noEOL = %v, want %v", got.NoEOL, want.NoEOL))
	}
	if (got.Cut == nil) != (want.Cut == nil) || got.Cut != nil && *got.Cut != *want.Cut {
		d = append(d, fmt.Sprintf("cut = %+v, want %+v", got.Cut, want.Cut))
	}
	if got.Event != want.Event || got.Signal() != want.Signal() {
		d = append(d, fmt.Sprintf("event/signal = %q/%q, want %q/%q", got.Event, got.Signal(), want.Event, want.Signal()))
	}
	if (got.Code() == nil) != (want.Code() == nil) || got.Code() != nil && *got.Code() != *want.Code() {
		d = append(d, fmt.Sprintf("code = %v, want %v", fmtCode(got.Code()), fmtCode(want.Code())))
	}
	if got.IsEvent() && got.Raw != nil {
		d = append(d, "event has non-nil raw")
	}
	if !got.IsEvent() && got.Raw == nil {
		d = append(d, "frame has nil raw")
	}
	return strings.Join(d, "; ")
}

func fmtCode(c *int) string {
	if c == nil {
		return "nil"
	}
	return fmt.Sprint(*c)
}

func short(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%q… (%d bytes)", b[:64], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func compareFrames(t testing.TB, got, want []frame.Frame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if d := diffFrame(&got[i], &want[i]); d != "" {
			t.Errorf("frame %d (seq %d): %s", i, want[i].Seq, d)
		}
	}
}

// roundTrip checks export → import → export: the frames come back, the
// second tape equals the first.
func roundTrip(t testing.TB, frames []frame.Frame, oneByte bool) {
	t.Helper()
	sess := testSession()
	first := export(t, sess, frames)
	var r io.Reader = bytes.NewReader(first)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	gotSess, got, err := readAll(r)
	if err != nil {
		t.Fatalf("read: %v\ntape:\n%s", err, short(first))
	}
	compareFrames(t, got, frames)
	want, _ := json.Marshal(sess)
	if g, _ := json.Marshal(gotSess); !bytes.Equal(g, want) {
		t.Errorf("session = %s, want %s", g, want)
	}
	second := export(t, gotSess, got)
	if !bytes.Equal(second, first) {
		t.Errorf("second export differs from the first:\n%s\nwant\n%s", short(second), short(first))
	}
}

// seqd numbers frames 1, 2, 3 … and gives them times.
func seqd(frames ...frame.Frame) []frame.Frame {
	for i := range frames {
		frames[i].Seq = uint64(i + 1)
		frames[i].At = int64(i) * 1000
	}
	return frames
}

func line(d frame.Dir, raw string) frame.Frame {
	return frame.Frame{Dir: d, Raw: []byte(raw)}
}

func TestRoundTrip(t *testing.T) {
	zero, one, neg := 0, 1, -1
	big := append(append([]byte(`{"data":"`), bytes.Repeat([]byte("x"), 20<<20)...), `"}`...)
	sum := sha256.Sum256([]byte("the whole line"))
	tests := []struct {
		name   string
		frames []frame.Frame
	}{
		{"empty tape", nil},
		{"json", seqd(line(frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`), line(frame.Out, `[1,2]`), line(frame.Out, `"s"`), line(frame.Out, `12`), line(frame.Out, `null`))},
		{"json with inner whitespace and tabs", seqd(line(frame.Out, "{ \"a\" :\t1 }"))},
		{"text", seqd(line(frame.Err, "plugin ready"))},
		{"empty", seqd(line(frame.Err, ""), line(frame.Out, ""))},
		{"invalid UTF-8", seqd(line(frame.Out, "\xff"), line(frame.Out, "a\xc3(b"), line(frame.Out, "{\"a\":\"\xed\xa0\x80\"}"))},
		{"lone CR", seqd(line(frame.Out, "\r"))},
		{"json then CR", seqd(line(frame.Out, "{\"a\":1}\r"))},
		{"CR inside json", seqd(line(frame.Out, "{\"a\":\r1}"))},
		{"leading space", seqd(line(frame.Out, ` {"a":1}`))},
		{"trailing space", seqd(line(frame.Out, `{"a":1} `))},
		{"script", seqd(line(frame.Out, `</script>`), line(frame.Out, `"</script>&"`))},
		{"U+2028", seqd(line(frame.Out, "a\u2028b\u2029"), line(frame.Out, "\"a\u2028b\""))},
		{"controls", seqd(line(frame.Err, "\x00\x01\x1f\x7f\t\b\f\\\"/"), line(frame.Err, "\\u0041"))},
		{"newline in raw", seqd(line(frame.Err, "a\nb"), line(frame.Out, "[1,\n2]"))},
		{"surrogate pairs", seqd(line(frame.Out, "😀"), line(frame.Out, `"\ud83d\ude00"`), line(frame.Out, `"\ud800"`))},
		{"last frame without newline", seqd(line(frame.In, `{"a":1}`), frame.Frame{Dir: frame.Out, Raw: []byte(`{"b":2}`), NoEOL: true})},
		{"cut", seqd(frame.Frame{Dir: frame.Out, Raw: []byte(`{"big":"`), Cut: &frame.Cut{Len: 17 << 20, SHA256: sum}})},
		{"cut and no EOL", seqd(frame.Frame{Dir: frame.Out, Raw: []byte("\xff"), NoEOL: true, Cut: &frame.Cut{Len: 99}})},
		{"events", seqd(
			line(frame.In, `{}`),
			frame.Frame{Event: frame.EventEOF, Dir: frame.In},
			frame.Frame{Event: frame.EventSignal}.WithEnd("SIGTERM", nil),
			frame.Frame{Event: frame.EventSignal},
			frame.Frame{Event: frame.EventClosed, Dir: frame.Out},
			frame.Frame{Event: frame.EventGone, Dir: frame.Out},
			frame.Frame{Event: frame.EventExit}.WithEnd("", &zero),
			frame.Frame{Event: frame.EventExit}.WithEnd("", &one),
			frame.Frame{Event: frame.EventExit}.WithEnd("", &neg),
			frame.Frame{Event: frame.EventExit}.WithEnd("SIGKILL", nil),
			frame.Frame{Event: frame.EventExit},
		)},
		{"sparse seq and negative at", []frame.Frame{{Seq: 5, At: -3, Dir: frame.In, Raw: []byte("x")}, {Seq: 1 << 62, At: 1 << 62, Dir: frame.Err, Raw: []byte("y")}}},
		{"20 MiB frame", seqd(frame.Frame{Dir: frame.Out, Raw: big}, line(frame.Out, "after"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			roundTrip(t, tt.frames, false)
			if tt.name != "20 MiB frame" {
				roundTrip(t, tt.frames, true)
			}
		})
	}
}

// TestRoundTripCorpus splits each JSONTestSuite file on "\n" into frames
// (they hold NUL, U+2028, invalid UTF-8, CR, BOMs …) and round-trips them.
func TestRoundTripCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpora", "JSONTestSuite", "test_parsing")
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("no JSONTestSuite corpus at %s", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range files {
		data, err := os.ReadFile(filepath.Join(dir, fi.Name()))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fi.Name(), func(t *testing.T) {
			parts := bytes.Split(data, []byte("\n"))
			eol := len(parts) > 1 && len(parts[len(parts)-1]) == 0
			if eol {
				parts = parts[:len(parts)-1]
			}
			var frames []frame.Frame
			for i, p := range parts {
				frames = append(frames, frame.Frame{Dir: frame.Dir(i%3 + 1), Raw: p})
			}
			frames[len(frames)-1].NoEOL = !eol
			roundTrip(t, seqd(frames...), false)
		})
	}
}

// TestWriteFormat pins the exact line each frame becomes.
func TestWriteFormat(t *testing.T) {
	code := 3
	var sum [32]byte
	sum[0], sum[31] = 0xab, 0x01
	tests := []struct {
		f    frame.Frame
		want string
	}{
		{frame.Frame{Seq: 1, At: 0, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":1}`)}, `{"seq":1,"at":0,"dir":"in","json":{"jsonrpc":"2.0","id":1}}`},
		{frame.Frame{Seq: 1, At: 412000, Dir: frame.Out, Raw: []byte(`{ "a" : [1, 2] }`)}, `{"seq":1,"at":412000,"dir":"out","json":{ "a" : [1, 2] }}`},
		{frame.Frame{Seq: 1, Dir: frame.Err, Raw: []byte("plugin ready")}, `{"seq":1,"at":0,"dir":"err","text":"plugin ready"}`},
		{frame.Frame{Seq: 1, Dir: frame.Err, Raw: nil}, `{"seq":1,"at":0,"dir":"err","text":""}`},
		{frame.Frame{Seq: 1, Dir: frame.Out, Raw: []byte("\xff")}, `{"seq":1,"at":0,"dir":"out","b64":"/w=="}`},
		{frame.Frame{Seq: 1, Dir: frame.Out, Raw: []byte(" 1")}, `{"seq":1,"at":0,"dir":"out","text":" 1"}`},
		{frame.Frame{Seq: 1, Dir: frame.Out, Raw: []byte("{\"a\":1}\r")}, `{"seq":1,"at":0,"dir":"out","text":"{\"a\":1}\r"}`},
		{frame.Frame{Seq: 1, Dir: frame.Out, Raw: []byte("<&>\x00\x1f\u2028\u2029é\\")}, `{"seq":1,"at":0,"dir":"out","text":"<&>\u0000\u001f\u2028\u2029é\\"}`},
		{frame.Frame{Seq: 1, Dir: frame.Out, Raw: []byte(`"<\u2028>"`)}, `{"seq":1,"at":0,"dir":"out","json":"<\u2028>"}`},
		{frame.Frame{Seq: 1, Dir: frame.Out, Raw: []byte("[1]"), NoEOL: true, Cut: &frame.Cut{Len: 70, SHA256: sum}},
			`{"seq":1,"at":0,"dir":"out","json":[1],"eol":false,"cut":{"len":70,"sha256":"ab` + strings.Repeat("00", 30) + `01"}}`},
		{frame.Frame{Seq: 9, At: 5, Dir: frame.In, Event: frame.EventEOF}, `{"seq":9,"at":5,"event":"eof"}`},
		{frame.Frame{Seq: 9, At: 5, Event: frame.EventSignal}.WithEnd("SIGTERM", nil), `{"seq":9,"at":5,"event":"signal","signal":"SIGTERM"}`},
		{frame.Frame{Seq: 9, At: 5, Event: frame.EventExit}.WithEnd("", &code), `{"seq":9,"at":5,"event":"exit","code":3}`},
		{frame.Frame{Seq: 9, At: 5, Event: frame.EventExit}.WithEnd("SIGKILL", nil), `{"seq":9,"at":5,"event":"exit","signal":"SIGKILL"}`},
		{frame.Frame{Seq: 9, At: 5, Dir: frame.Out, Event: frame.EventGone}, `{"seq":9,"at":5,"event":"gone"}`},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, &frame.Session{ID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&tt.f); err != nil {
			t.Errorf("Write(%q): %v", tt.f.Raw, err)
			continue
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		_, got, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
		if string(got) != tt.want+"\n" {
			t.Errorf("Write(%+v) wrote\n%s\nwant\n%s", tt.f, got, tt.want)
		}
	}
}

func TestHeader(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, &frame.Session{ID: "x", Command: []string{"node"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `{"tapedeck":1,"session":{"id":"x","command":["node"],"cwd":"","plugin":{"id":"","name":"","version":""},"started":"0001-01-01T00:00:00Z","ended":null,"status":"","exit":{"code":null},"frames":{"in":0,"out":0,"err":0},"bytes":{"in":0,"out":0,"err":0},"tapedeck":""}}` + "\n"
	if buf.String() != want {
		t.Errorf("header = %s, want %s", buf.String(), want)
	}
	r, err := NewReader(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	if s := r.Session(); s.ID != "x" || len(s.Command) != 1 {
		t.Errorf("Session() = %+v", s)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next() on a tape with no frames = %v, want io.EOF", err)
	}
}

// TestReadTolerates covers what Reader accepts that Writer never writes.
func TestReadTolerates(t *testing.T) {
	const hdr = `{"tapedeck":1,"session":{"id":"x"}}`
	tests := []struct {
		name, tape string
		want       []string // raw of each frame
	}{
		{"no final newline", hdr + "\n" + `{"seq":1,"at":0,"dir":"in","text":"a"}`, []string{"a"}},
		{"header only, no newline", hdr, nil},
		{"blank lines at the end", hdr + "\n" + `{"seq":1,"at":0,"dir":"in","text":"a"}` + "\n\n\n \n", []string{"a"}},
		{"CRLF", hdr + "\r\n" + `{"seq":1,"at":0,"dir":"in","json":[1]}` + "\r\n\r\n", []string{"[1]"}},
		{"members in any order, spaces", hdr + "\n" + ` { "text" : "\u00e9" , "dir" : "err" , "at" : 5 , "seq" : 2 } `, []string{"é"}},
		{"older escapes", hdr + "\n" + `{"seq":1,"at":0,"dir":"in","text":"\/\ud83d\ude00\u2028"}`, []string{"/😀\u2028"}},
		{"b64 of text", hdr + "\n" + `{"seq":1,"at":0,"dir":"in","b64":"YQ=="}`, []string{"a"}},
		{"empty b64", hdr + "\n" + `{"seq":1,"at":0,"dir":"in","b64":""}`, []string{""}},
		{"unknown session member", `{"session":{"id":"x","future":1},"tapedeck":1}` + "\n", nil},
		{"uppercase sha256", hdr + "\n" + `{"seq":1,"at":0,"dir":"in","text":"a","cut":{"sha256":"` + strings.Repeat("AB", 32) + `","len":1}}`, []string{"a"}},
	}
	for _, tt := range tests {
		_, frames, err := readAll(strings.NewReader(tt.tape))
		if err != nil {
			t.Errorf("%s: read: %v", tt.name, err)
			continue
		}
		var got []string
		for _, f := range frames {
			got = append(got, string(f.Raw))
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
			t.Errorf("%s: read frames %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestReadErrors(t *testing.T) {
	const hdr = `{"tapedeck":1,"session":{"id":"x"}}` + "\n"
	const ok = `{"seq":1,"at":0,"dir":"in","text":"a"}` + "\n"
	tests := []struct {
		name, tape string
		is         error
		want       string
	}{
		{"newer version", `{"tapedeck":2,"session":{"id":"x"}}` + "\n", ErrNewer, "the tape is version 2, this tapedeck reads versions up to 1: upgrade tapedeck"},
		{"newer version, other header", `{"tapedeck":7,"meta":{}}` + "\n", ErrNewer, "version 7"},
		{"empty", "", ErrMalformed, "tape line 1: empty tape"},
		{"blank header", "\n" + hdr, ErrMalformed, "tape line 1: blank line"},
		{"not json header", "hello\n", ErrMalformed, "tape line 1: not valid JSON: invalid character 'h'"},
		{"array header", "[1]\n", ErrMalformed, "tape line 1: want a JSON object"},
		{"no version", `{"session":{}}` + "\n", ErrMalformed, `tape line 1: not a tape header: missing "tapedeck"`},
		{"version zero", `{"tapedeck":0,"session":{}}` + "\n", ErrMalformed, `tape line 1: "tapedeck" must be a positive integer`},
		{"version float", `{"tapedeck":1.0,"session":{}}` + "\n", ErrMalformed, `tape line 1: "tapedeck" must be a positive integer`},
		{"version string", `{"tapedeck":"1","session":{}}` + "\n", ErrMalformed, `tape line 1: "tapedeck" must be a positive integer`},
		{"no session", `{"tapedeck":1}` + "\n", ErrMalformed, `tape line 1: missing "session"`},
		{"null session", `{"tapedeck":1,"session":null}` + "\n", ErrMalformed, `tape line 1: "session" must be an object`},
		{"bad session", `{"tapedeck":1,"session":{"id":5}}` + "\n", ErrMalformed, `tape line 1: "session": json: cannot unmarshal number`},
		{"unknown header member", `{"tapedeck":1,"session":{},"x":1}` + "\n", ErrMalformed, `tape line 1: unknown member "x" in the header`},
		{"duplicate header member", `{"tapedeck":1,"session":{},"tapedeck":1}` + "\n", ErrMalformed, `tape line 1: duplicate member "tapedeck"`},

		{"invalid UTF-8", hdr + "{\"seq\":1,\"at\":0,\"dir\":\"in\",\"text\":\"\xff\"}\n", ErrMalformed, "tape line 2: not valid UTF-8"},
		{"not json", hdr + ok + `{"seq":2,` + "\n", ErrMalformed, "tape line 3: not valid JSON"},
		{"trailing data", hdr + `{"seq":1,"at":0,"dir":"in","text":"a"} {}` + "\n", ErrMalformed, "tape line 2: not valid JSON"},
		{"not an object", hdr + `"text"` + "\n", ErrMalformed, "tape line 2: want a JSON object"},
		{"blank line in the middle", hdr + ok + "\n" + `{"seq":2,"at":0,"dir":"in","text":"a"}` + "\n", ErrMalformed, "tape line 3: blank line"},
		{"missing seq", hdr + `{"at":0,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: missing "seq"`},
		{"seq zero", hdr + `{"seq":0,"at":0,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: "seq" must be a positive integer`},
		{"seq negative", hdr + `{"seq":-1,"at":0,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: "seq" must be a positive integer`},
		{"seq float", hdr + `{"seq":1.5,"at":0,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: "seq" must be a positive integer`},
		{"seq backwards", hdr + `{"seq":5,"at":0,"dir":"in","text":"a"}` + "\n" + ok, ErrMalformed, `tape line 3: "seq" must not decrease (1 after 5)`},
		{"missing at", hdr + `{"seq":1,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: missing "at"`},
		{"at float", hdr + `{"seq":1,"at":1.5,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: "at" must be an integer`},
		{"at exponent", hdr + `{"seq":1,"at":1e9,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: "at" must be an integer`},
		{"at string", hdr + `{"seq":1,"at":"0","dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: "at" must be an integer`},
		{"at too big", hdr + `{"seq":1,"at":9223372036854775808,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: "at" must be an integer`},
		{"missing dir", hdr + `{"seq":1,"at":0,"text":"a"}` + "\n", ErrMalformed, `tape line 2: missing "dir" (or "event")`},
		{"bad dir", hdr + ok + `{"seq":7,"at":0,"dir":"up","text":"a"}` + "\n", ErrMalformed, `tape line 3: "dir" must be in, out or err`},
		{"dir not a string", hdr + `{"seq":1,"at":0,"dir":1,"text":"a"}` + "\n", ErrMalformed, `tape line 2: "dir" must be in, out or err`},
		{"no data", hdr + `{"seq":1,"at":0,"dir":"in"}` + "\n", ErrMalformed, `tape line 2: want exactly one of "json", "text" or "b64"`},
		{"two data", hdr + `{"seq":1,"at":0,"dir":"in","json":1,"text":"1"}` + "\n", ErrMalformed, `tape line 2: want exactly one of "json", "text" or "b64", have "json" and "text"`},
		{"text not a string", hdr + `{"seq":1,"at":0,"dir":"in","text":1}` + "\n", ErrMalformed, `tape line 2: "text" must be a string`},
		{"text lone surrogate", hdr + `{"seq":1,"at":0,"dir":"in","text":"\ud800x"}` + "\n", ErrMalformed, `tape line 2: "text": lone surrogate \ud800`},
		{"text lone low surrogate", hdr + `{"seq":1,"at":0,"dir":"in","text":"\udc00"}` + "\n", ErrMalformed, `tape line 2: "text": lone surrogate \udc00`},
		{"b64 invalid", hdr + `{"seq":1,"at":0,"dir":"in","b64":"!!!!"}` + "\n", ErrMalformed, `tape line 2: "b64" is not valid base64`},
		{"b64 unpadded", hdr + `{"seq":1,"at":0,"dir":"in","b64":"/w"}` + "\n", ErrMalformed, `tape line 2: "b64" is not valid base64`},
		{"b64 not canonical", hdr + `{"seq":1,"at":0,"dir":"in","b64":"/x=="}` + "\n", ErrMalformed, `tape line 2: "b64" is not valid base64`},
		{"b64 escaped newline", hdr + `{"seq":1,"at":0,"dir":"in","b64":"/w\n=="}` + "\n", ErrMalformed, `tape line 2: "b64" must be a string`},
		{"b64 not a string", hdr + `{"seq":1,"at":0,"dir":"in","b64":[]}` + "\n", ErrMalformed, `tape line 2: "b64" must be a string`},
		{"eol true", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","eol":true}` + "\n", ErrMalformed, `tape line 2: "eol" may only be false`},
		{"cut not an object", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","cut":5}` + "\n", ErrMalformed, `tape line 2: "cut" must be an object`},
		{"cut missing sha256", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","cut":{"len":5}}` + "\n", ErrMalformed, `tape line 2: "cut" must have "len" and "sha256"`},
		{"cut short sha256", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","cut":{"len":5,"sha256":"abcd"}}` + "\n", ErrMalformed, `tape line 2: "cut.sha256" must be 64 hex digits`},
		{"cut non-hex sha256", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","cut":{"len":5,"sha256":"` + strings.Repeat("zz", 32) + `"}}` + "\n", ErrMalformed, `tape line 2: "cut.sha256" must be 64 hex digits`},
		{"cut negative len", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","cut":{"len":-1,"sha256":"` + strings.Repeat("00", 32) + `"}}` + "\n", ErrMalformed, `tape line 2: "cut.len" must be a non-negative integer`},
		{"cut unknown member", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","cut":{"len":1,"sha256":"` + strings.Repeat("00", 32) + `","sha":1}}` + "\n", ErrMalformed, `tape line 2: unknown member "sha" in "cut"`},
		{"cut duplicate member", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","cut":{"len":1,"len":2}}` + "\n", ErrMalformed, `tape line 2: duplicate member "len" in "cut"`},
		{"unknown member", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","txt":"b"}` + "\n", ErrMalformed, `tape line 2: unknown member "txt"`},
		{"member in other case", hdr + `{"Seq":1,"at":0,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: unknown member "Seq"`},
		{"escaped member name", hdr + `{"s\u0065q":1,"at":0,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: unknown member "s\u0065q"`},
		{"duplicate member", hdr + `{"seq":1,"at":0,"at":1,"dir":"in","text":"a"}` + "\n", ErrMalformed, `tape line 2: duplicate member "at"`},
		{"duplicate data", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","text":"b"}` + "\n", ErrMalformed, `tape line 2: duplicate member "text"`},
		{"unknown event", hdr + `{"seq":1,"at":0,"event":"boom"}` + "\n", ErrMalformed, `tape line 2: unknown event "boom"`},
		{"event not a string", hdr + `{"seq":1,"at":0,"event":1}` + "\n", ErrMalformed, `tape line 2: "event" must be a string`},
		{"event with dir", hdr + `{"seq":1,"at":0,"event":"eof","dir":"in"}` + "\n", ErrMalformed, `tape line 2: "dir" is not allowed on an event line`},
		{"event with data", hdr + `{"seq":1,"at":0,"event":"eof","text":""}` + "\n", ErrMalformed, `tape line 2: "text" is not allowed on an event line`},
		{"event with eol", hdr + `{"seq":1,"at":0,"event":"eof","eol":false}` + "\n", ErrMalformed, `tape line 2: "eol" is not allowed on an event line`},
		{"event with cut", hdr + `{"seq":1,"at":0,"event":"eof","cut":{}}` + "\n", ErrMalformed, `tape line 2: "cut" is not allowed on an event line`},
		{"signal on eof", hdr + `{"seq":1,"at":0,"event":"eof","signal":"SIGTERM"}` + "\n", ErrMalformed, `tape line 2: "signal" is not allowed on a eof event`},
		{"empty signal", hdr + `{"seq":1,"at":0,"event":"signal","signal":""}` + "\n", ErrMalformed, `tape line 2: "signal" must be a non-empty string`},
		{"code on signal", hdr + `{"seq":1,"at":0,"event":"signal","code":1}` + "\n", ErrMalformed, `tape line 2: "code" is not allowed on a signal event`},
		{"code float", hdr + `{"seq":1,"at":0,"event":"exit","code":1.5}` + "\n", ErrMalformed, `tape line 2: "code" must be an integer`},
		{"signal on frame", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","signal":"SIGTERM"}` + "\n", ErrMalformed, `tape line 2: "signal" is only allowed on an event line`},
		{"code on frame", hdr + `{"seq":1,"at":0,"dir":"in","text":"a","code":0}` + "\n", ErrMalformed, `tape line 2: "code" is only allowed on an event line`},
	}
	for _, tt := range tests {
		_, _, err := readAll(strings.NewReader(tt.tape))
		switch {
		case err == nil:
			t.Errorf("%s: read succeeded, want error %q", tt.name, tt.want)
		case !errors.Is(err, tt.is):
			t.Errorf("%s: error %q does not wrap %v", tt.name, err, tt.is)
		case !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: error %q, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// TestNextSticky checks that Next keeps returning its error.
func TestNextSticky(t *testing.T) {
	tape := `{"tapedeck":1,"session":{}}` + "\nnope\n" + `{"seq":1,"at":0,"dir":"in","text":"a"}` + "\n"
	r, err := NewReader(strings.NewReader(tape))
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err2 != err1 {
		t.Errorf("Next() = %v, then %v; want the same error twice", err1, err2)
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	tape := `{"tapedeck":1,"session":{}}` + "\n" + `{"seq":1,"at":0,"dir":"in","text":"a"}` + "\n"
	r, err := NewReader(io.MultiReader(strings.NewReader(tape), iotest.ErrReader(boom)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatalf("Next() = %v", err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) || errors.Is(err, ErrMalformed) {
		t.Errorf("Next() at a read error = %v, want it to wrap boom", err)
	}
}

func TestWriteErrors(t *testing.T) {
	code := 0
	tests := []struct {
		name string
		f    frame.Frame
		want string
	}{
		{"seq zero", frame.Frame{Dir: frame.In}, "seq must be at least 1"},
		{"seq not increasing", frame.Frame{Seq: 1, Dir: frame.In}, "seq must increase (1 after 1)"},
		{"no dir", frame.Frame{Seq: 2}, "want in, out or err"},
		{"frame with signal", frame.Frame{Seq: 2, Dir: frame.In}.WithEnd("SIGTERM", nil), "signal or a code"},
		{"frame with code", frame.Frame{Seq: 2, Dir: frame.In}.WithEnd("", &code), "signal or a code"},
		{"unknown event", frame.Frame{Seq: 2, Event: frame.EventGone + 1}, `unknown event event(6)`},
		{"event with raw", frame.Frame{Seq: 2, Event: frame.EventExit, Raw: []byte("x")}, "exit event has bytes"},
		{"event with cut", frame.Frame{Seq: 2, Event: frame.EventExit, Cut: &frame.Cut{}}, "exit event has bytes"},
		{"event with other dir", frame.Frame{Seq: 2, Event: frame.EventEOF, Dir: frame.Out}, "eof event has dir out, want in"},
		{"signal on closed", frame.Frame{Seq: 2, Dir: frame.Out, Event: frame.EventClosed}.WithEnd("SIGTERM", nil), "closed event has a signal"},
		{"code on signal", frame.Frame{Seq: 2, Event: frame.EventSignal}.WithEnd("", &code), "signal event has a code"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&frame.Frame{Seq: 1, Dir: frame.In}); err != nil {
			t.Fatal(err)
		}
		err = w.Write(&tt.f)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Write = %v, want an error containing %q", tt.name, err, tt.want)
		}
		// The refused frame left nothing behind: the tape still reads.
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, frames, err := readAll(&buf); err != nil || len(frames) != 1 {
			t.Errorf("%s: after the refused Write the tape reads %d frames, %v", tt.name, len(frames), err)
		}
	}
}

func TestWriteSticky(t *testing.T) {
	boom := errors.New("boom")
	w, err := NewWriter(errWriter{boom}, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := frame.Frame{Seq: 1, Dir: frame.Out, Raw: bytes.Repeat([]byte("a"), 1<<20)}
	if err := w.Write(&big); !errors.Is(err, boom) {
		t.Errorf("Write(1 MiB) = %v, want boom", err)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Errorf("Flush() = %v, want boom", err)
	}
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// fuzzSeeds are tapes for FuzzReader.
func fuzzSeeds(t testing.TB) [][]byte {
	code := 2
	seeds := [][]byte{
		export(t, testSession(), seqd(
			line(frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`),
			line(frame.Err, "ready\r"),
			line(frame.Out, "\xff\xfe"),
			frame.Frame{Dir: frame.Out, Raw: []byte(`{"a":`), Cut: &frame.Cut{Len: 100}},
			frame.Frame{Event: frame.EventEOF, Dir: frame.In},
			frame.Frame{Event: frame.EventSignal}.WithEnd("SIGTERM", nil),
			frame.Frame{Event: frame.EventExit}.WithEnd("", &code),
			frame.Frame{Dir: frame.Err, Raw: []byte("bye"), NoEOL: true},
		)),
		[]byte(`{"tapedeck":1,"session":{}}` + "\n" + `{"seq":1,"at":0,"dir":"in","text":"\ud83d\ude00\u0000"}` + "\r\n\n"),
		[]byte(`{"tapedeck":2,"session":{}}`),
		[]byte(`{"tapedeck":1,"session":{"started":"2025-01-01T00:00:00.5+01:00","ended":null}}` + "\n"),
	}
	return seeds
}

func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sess, frames, err := readAll(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNewer) {
				t.Fatalf("read error %v wraps neither ErrMalformed nor ErrNewer", err)
			}
			return
		}
		first := export(t, sess, frames)
		sess2, frames2, err := readAll(bytes.NewReader(first))
		if err != nil {
			t.Fatalf("re-exported tape does not read: %v\n%s", err, first)
		}
		compareFrames(t, frames2, frames)
		if second := export(t, sess2, frames2); !bytes.Equal(second, first) {
			t.Errorf("export → import → export changed the tape:\n%s\nwant\n%s", second, first)
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "{}", " {}", "{}\r", "\xff", "a\u2028", `"\ud800"`, "\x00", "<\n>", "[1,\t2]"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, noEOL bool) {
		roundTrip(t, []frame.Frame{{Seq: 1, At: 7, Dir: frame.Out, Raw: raw, NoEOL: noEOL}}, false)
	})
}

// TestRepeatedSeqAndFile: a line may repeat the seq before it (replay
// --update inserts frames so); it reads with the next free seq, and so does
// every later line it would collide with. ReadFile keeps each line as
// written beside its frame.
func TestRepeatedSeqAndFile(t *testing.T) {
	data := `{"tapedeck":1,"session":{"id":"x"}}` + "\n" +
		`{"seq":1,"at":0,"dir":"in","text":"a"}` + "\n" +
		`{"seq":1,"at":0,"dir":"out","text":"inserted"}` + "\n" +
		`{"seq":2,"at":5,"dir":"out","text":"b"}` + "\n" +
		`{"seq":9,"at":7,"event":"exit","code":0}` + "\n"
	f, err := ReadFile([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var seqs, written []uint64
	for i := range f.Frames {
		seqs = append(seqs, f.Frames[i].Seq)
		written = append(written, f.Seqs[i])
	}
	if fmt.Sprint(seqs) != "[1 2 3 9]" || fmt.Sprint(written) != "[1 1 2 9]" {
		t.Errorf("seqs %v, written %v", seqs, written)
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	if string(f.Header) != lines[0] || len(f.Lines) != 4 || string(f.Lines[2]) != lines[3] || string(f.Frames[1].Raw) != "inserted" {
		t.Errorf("header %q, lines %q", f.Header, f.Lines)
	}
	if *f.Frames[3].Code() != 0 {
		t.Error("exit code lost")
	}
	line, err := AppendLine(nil, nil, &frame.Frame{Seq: 1, At: 3, Dir: frame.Out, Raw: []byte(`{"a":1}`)})
	if err != nil || string(line) != `{"seq":1,"at":3,"dir":"out","json":{"a":1}}`+"\n" {
		t.Errorf("AppendLine: %q %v", line, err)
	}
	if _, err := AppendLine(nil, nil, &frame.Frame{Dir: frame.Out}); err == nil {
		t.Error("AppendLine took a frame without a seq")
	}
}

// TestHeaderLineIsCapped: a first line longer than MaxHeader is refused as
// no tape, after reading just past the cap, not read to its end.
func TestHeaderLineIsCapped(t *testing.T) {
	line := `{"tapedeck":1,"session":{"id":"x","name":"` + strings.Repeat("n", MaxHeader) + `"}}` + "\n"
	r := &countingReader{r: strings.NewReader(line + strings.Repeat("x", 8<<20))}
	_, err := NewReader(r)
	if err == nil || !strings.Contains(err.Error(), "header line is longer than 1 MiB") {
		t.Fatalf("NewReader = %v, want the header refused", err)
	}
	if r.n > MaxHeader+1<<20 {
		t.Errorf("read %d bytes to refuse a header over %d", r.n, MaxHeader)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += k
	return k, err
}

// TestHeaderFramedRoundTrip: a header-framed session's tape elides the
// plain header blocks, spells the others and the bare lines, and reads
// back every frame with its block, byte for byte; written again it is the
// same file.
func TestHeaderFramedRoundTrip(t *testing.T) {
	meta := &frame.Session{ID: "x", Framing: "headers", Profile: "lsp"}
	mk := func(seq uint64, dir frame.Dir, raw, head string) frame.Frame {
		f := frame.Frame{Seq: seq, Dir: dir, Raw: []byte(raw)}
		if head != "" {
			f.SetHead([]byte(head))
		}
		return f
	}
	frames := []frame.Frame{
		mk(1, frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "Content-Length: 46\r\n\r\n"),
		mk(2, frame.Out, `{}`, "Content-Type: x\r\nContent-Length: 2\r\n\r\n"),
		mk(3, frame.Out, `log line`, ""),
		mk(4, frame.Err, `stderr line`, ""),
		mk(5, frame.Out, `{}`, "X: \xff\r\nContent-Length: 2\r\n\r\n"),
		mk(6, frame.In, `{"a":1}`, "Content-Length: 99\r\n\r\n"),
	}
	var b bytes.Buffer
	if err := WriteAll(&b, meta, frames); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{`"dir":"in","json":{"jsonrpc"`, `"head":"Content-Type: x\r\nContent-Length: 2\r\n\r\n"`, `"line":true,"text":"log line"`, `"dir":"err","text":"stderr line"`, `"head64":`, `"head":"Content-Length: 99\r\n\r\n"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the tape lacks %s:\n%s", want, text)
		}
	}
	got := readFrames(t, text)
	for i := range frames {
		if !got[i].Same(&frames[i]) {
			t.Errorf("frame %d read back as raw %q head %q, want raw %q head %q", i+1, got[i].Raw, got[i].Head(), frames[i].Raw, frames[i].Head())
		}
	}
	var again bytes.Buffer
	if err := WriteAll(&again, meta, got); err != nil || again.String() != text {
		t.Errorf("written again (%v):\n%s\nwant\n%s", err, again.String(), text)
	}
	if _, err := NewReader(strings.NewReader(`{"tapedeck":1,"session":{}}` + "\n" + `{"seq":1,"at":0,"dir":"in","line":true,"json":{}}` + "\n")); err == nil {
		r, _ := NewReader(strings.NewReader(`{"tapedeck":1,"session":{}}` + "\n" + `{"seq":1,"at":0,"dir":"in","line":true,"json":{}}` + "\n"))
		if _, err := r.Next(); err == nil {
			t.Error(`"line" in a session of lines was read`)
		}
	}
}

func readFrames(t *testing.T, text string) []frame.Frame {
	t.Helper()
	r, err := NewReader(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var out []frame.Frame
	if err := r.Each(func(f *frame.Frame) error {
		c := *f
		c.Raw = bytes.Clone(f.Raw)
		out = append(out, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
