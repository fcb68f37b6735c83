package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/tape"
)

// lspMessage is one header-framed message with the plain block.
func lspMessage(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// TestHeaderFramedStreamsRoundTrip: a header-framed stream recorded through
// the shim is relayed byte for byte, stored one frame per message with its
// header block, and export, import and export again give the same tape,
// from whose frames both streams are rebuilt byte for byte: for a
// language server's session, for hostile header blocks (extra fields, "\n"
// without "\r", a wrong length, a bare line, an empty body, a block that
// never ends) and for a 16 MiB body.
func TestHeaderFramedStreamsRoundTrip(t *testing.T) {
	t.Parallel()
	session := lspMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"file:///w","capabilities":{}}}`) +
		lspMessage(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
		lspMessage(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///w/a.go","languageId":"go","version":1,"text":"package a\n"}}}`) +
		lspMessage(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///w/a.go"},"position":{"line":0,"character":8}}}`) +
		lspMessage(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`) +
		lspMessage(`{"jsonrpc":"2.0","method":"exit"}`)
	hostile := "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}" +
		"content-length: 7\n\n[1,2,3]" +
		"a stray line on stdout\n" +
		"Content-Length: 0\r\n\r\n" +
		"Content-Length: 9\r\n\r\n{\"a\":1}" + "Content-Length: 2\r\n\r\n{}" + // says 9: takes 2 bytes of the next block
		"X-Only: no length\r\n\r\n" +
		"Content-Length: 5\r\n\r\n\xff\xfe\x00ab" +
		"Content-Length: 12\r\nX-Unfinished"
	big := lspMessage(`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 16<<20) + `"}`)
	for _, tc := range []struct{ name, in string }{
		{"language server session", session},
		{"hostile header blocks", hostile},
		{"16 MiB body", big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if len(tc.in) > 1<<20 {
				skipBigUnderRace(t) // 38 s of CPU under the race detector, 5 s without
			}
			store := filepath.Join(t.TempDir(), "store")
			r := recordFixture(t, store, "echo", []byte(tc.in))
			if r.code != 0 {
				t.Fatalf("record: exit %d: %s", r.code, r.stderr)
			}
			if !bytes.Equal(r.stdout, []byte(tc.in)) {
				t.Fatalf("relayed %d bytes that differ from the %d sent", len(r.stdout), len(tc.in))
			}
			dir := t.TempDir()
			first := filepath.Join(dir, "first.jsonl")
			if r := tapedeck(t, store, nil, nil, "export", "-o", first, "last"); r.code != 0 {
				t.Fatalf("export: exit %d: %s", r.code, r.stderr)
			}
			data, err := os.ReadFile(first)
			if err != nil {
				t.Fatal(err)
			}
			meta, frames := readTapeFrames(t, data)
			if meta.Framing != "headers" || meta.Profile != "lsp" {
				t.Errorf("the tape says framing %q, profile %q; want headers, lsp", meta.Framing, meta.Profile)
			}
			for _, dir := range []frame.Dir{frame.In, frame.Out} {
				if got := rebuild(frames, dir); got != tc.in {
					t.Errorf("%s rebuilt from the tape differs from what was sent (%d bytes, want %d)", dir, len(got), len(tc.in))
				}
			}
			other := filepath.Join(dir, "other")
			if r := tapedeck(t, other, nil, nil, "import", first); r.code != 0 {
				t.Fatalf("import: exit %d: %s", r.code, r.stderr)
			}
			second := filepath.Join(dir, "second.jsonl")
			if r := tapedeck(t, other, nil, nil, "export", "-o", second, "last"); r.code != 0 {
				t.Fatalf("export again: exit %d: %s", r.code, r.stderr)
			}
			again, err := os.ReadFile(second)
			if err != nil {
				t.Fatal(err)
			}
			if _, f1 := readTapeFrames(t, again); len(f1) != len(frames) || rebuild(f1, frame.In) != tc.in {
				t.Errorf("export → import → export: the frames changed")
			}
			if !bytes.Equal(data, again) {
				t.Errorf("export → import → export: the tape changed:\n%.2000s\nthen\n%.2000s", data, again)
			}
		})
	}
}

// readTapeFrames reads a whole tape, each frame's bytes its own.
func readTapeFrames(t *testing.T, data []byte) (*frame.Session, []frame.Frame) {
	t.Helper()
	r, err := tape.NewReader(bytes.NewReader(data))
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
	return r.Session(), out
}

// rebuild is the stream dir carried, from its frames.
func rebuild(frames []frame.Frame, dir frame.Dir) string {
	var b []byte
	for i := range frames {
		if f := &frames[i]; f.Dir == dir && !f.IsEvent() {
			b = wire.Append(b, f.Head(), f.Raw, !f.NoEOL)
		}
	}
	return string(b)
}
