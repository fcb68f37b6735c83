package tape

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestCutLinesOverStreamsTextAndB64: a long "text" frame (escapes of every
// length, surrogate pairs among them, falling across the reader's buffer
// at every offset) and a long "b64" one, each with members after it (eol,
// cut, or the seq last), come out of a reader that cuts them as the same
// frame read whole and cut would be: their first bytes, the whole length
// and SHA-256, and the members after the string still read. Before, such
// lines were read whole.
func TestCutLinesOverStreamsTextAndB64(t *testing.T) {
	const maxFrame = 1000
	unit := "ab\\n\\u00e9\\ud83d\\ude00\\\\\\\"x\\t\\u2028é😀" // 30 bytes spelled
	text := strings.Repeat(unit, 40000)
	var decoded bytes.Buffer
	for range 40000 {
		decoded.WriteString("ab\né😀\\\"x\t\u2028é😀")
	}
	bin := bytes.Repeat([]byte{0xff, 0x00, 0x80, 'a', '\n'}, 300000)
	b64 := base64.StdEncoding.EncodeToString(bin)
	head := `{"tapedeck":1,"session":{"id":"s","command":["true"],"cwd":".","status":"complete"}}` + "\n"
	cases := []struct {
		name, line string
		raw        []byte
		noEOL      bool
	}{
		{"text last", `{"seq":1,"at":1,"dir":"out","text":"` + text + `"}`, decoded.Bytes(), false},
		{"text then eol", `{"seq":1,"at":1,"dir":"out","text":"` + text + `","eol":false}`, decoded.Bytes(), true},
		{"text first", `{"text":"` + text + `","dir":"err","at":1,"seq":1}`, decoded.Bytes(), false},
		{"b64 then eol", `{"seq":1,"at":1,"dir":"out","b64":"` + b64 + `","eol":false}`, bin, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := NewReader(strings.NewReader(head + c.line + "\n" + `{"seq":2,"at":2,"event":"exit","code":0}` + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			tr.CutLinesOver(maxFrame)
			f, err := tr.Next()
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(c.raw)
			if !bytes.Equal(f.Raw, c.raw[:maxFrame]) || f.Cut == nil || f.Cut.Len != int64(len(c.raw)) || f.Cut.SHA256 != sum || f.NoEOL != c.noEOL {
				t.Errorf("frame: %d bytes %q…, cut %+v, noEOL %v; want the first %d of %d bytes, SHA-256 %x, noEOL %v", len(f.Raw), f.Raw[:min(len(f.Raw), 20)], f.Cut, f.NoEOL, maxFrame, len(c.raw), sum, c.noEOL)
			}
			if ev, err := tr.Next(); err != nil || ev.Event != frame.EventExit {
				t.Errorf("the line after: %+v, %v", ev, err)
			}
		})
	}
	// A string that never ends is malformed, not read past the line.
	tr, _ := NewReader(strings.NewReader(head + `{"seq":1,"at":1,"dir":"out","text":"` + text + "\n"))
	tr.CutLinesOver(maxFrame)
	if _, err := tr.Next(); err == nil || !strings.Contains(err.Error(), "tape line 2") {
		t.Errorf("an unended long string: %v, want a malformed line 2", err)
	}
}

// FuzzCutLinesOver: a long line whose frame is spelled "text" or "b64"
// (a piece repeated past the streaming bound, with members after it) is
// read cut as the same line read whole and then cut: the first bytes, the
// length and the SHA-256 agree, and so do the members after it.
func FuzzCutLinesOver(f *testing.F) {
	f.Add([]byte("ab\\n\\u00e9\\ud83d\\ude00\\\\\\\"x"), false, true)
	f.Add([]byte("AP+AYQr/"), true, false)
	f.Add([]byte("\\ud83d"), false, false)
	f.Fuzz(func(t *testing.T, piece []byte, b64 bool, eol bool) {
		if len(piece) == 0 || len(piece) > 64 {
			return
		}
		form := "text"
		if b64 {
			form = "b64"
		}
		spelled := bytes.Repeat(piece, (70<<10)/len(piece)+1)
		line := `{"seq":1,"at":1,"dir":"out","` + form + `":"` + string(spelled) + `"`
		if eol {
			line += `,"eol":false`
		}
		data := `{"tapedeck":1,"session":{"id":"s"}}` + "\n" + line + "}\n"
		whole, err := NewReader(strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		want, err := whole.Next()
		if err != nil {
			return // not a tape line: the cut reader need not agree
		}
		const maxFrame = 100
		cut, _ := NewReader(strings.NewReader(data))
		cut.CutLinesOver(maxFrame)
		got, err := cut.Next()
		if err != nil {
			t.Fatalf("read whole: %d bytes; read cut: %v", len(want.Raw), err)
		}
		if len(want.Raw) <= maxFrame {
			return
		}
		if !bytes.Equal(got.Raw, want.Raw[:maxFrame]) || got.Cut == nil || got.Cut.Len != int64(len(want.Raw)) || got.Cut.SHA256 != sha256.Sum256(want.Raw) || got.NoEOL != want.NoEOL {
			t.Errorf("cut read: %q, cut %+v, noEOL %v; whole: %d bytes, noEOL %v", got.Raw, got.Cut, got.NoEOL, len(want.Raw), want.NoEOL)
		}
	})
}

// TestALongTextLineIsDecodedInPlace: a long "text" line read cut moves
// only what is left of each read to its start, not what is left after
// every piece decoded (a 64 MiB line moved up to the whole first read at
// each of its pieces: 11.6 s where it now takes 2.4).
func TestALongTextLineIsDecodedInPlace(t *testing.T) {
	t.Parallel()
	const maxFrame = 4 << 20
	text := strings.Repeat("abcdefgh", (maxFrame+maxFrame/2)/8)
	head := `{"tapedeck":1,"session":{"id":"s","command":["true"],"cwd":".","status":"complete"}}` + "\n"
	tr, err := NewReader(strings.NewReader(head + `{"seq":1,"at":1,"dir":"out","text":"` + text + `"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr.CutLinesOver(maxFrame)
	f, err := tr.Next()
	if err != nil || f.Cut == nil || f.Cut.Len != int64(len(text)) || len(f.Raw) != maxFrame {
		t.Fatalf("the long line: %d bytes, cut %+v, %v", len(f.Raw), f.Cut, err)
	}
	if tr.shifted > int64(len(text))/8 {
		t.Errorf("%d bytes moved to read a %d-byte line: what is left is moved after every piece", tr.shifted, len(text))
	}
}
