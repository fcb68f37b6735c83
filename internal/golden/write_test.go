package golden

import (
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestKeptTapesAreRedactedAsExportDoes: a golden tape (play's Keep it,
// tapetest's first run) goes into git, so the
// credential a plugin sent in a net/fetch header and a token-named
// environment variable are placeholders in it, the header says what was
// redacted, and the header's byte counts are the frames' as written.
func TestKeptTapesAreRedactedAsExportDoes(t *testing.T) {
	key := func() ([]byte, error) { return []byte(strings.Repeat("k", 32)), nil }
	meta := &frame.Session{ID: "s1", Env: map[string]string{"AGENTTY_API_TOKEN": "hunter2"}}
	frames := []frame.Frame{
		{Seq: 1, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"net/fetch","params":{"url":"https://x","headers":{"Authorization":"Bearer abc"}}}`)},
		{Seq: 2, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"status":200}}`)},
	}
	out, err := redactForGit(meta, frames, key)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out[0].Raw), "Bearer abc") || !strings.Contains(string(out[0].Raw), `"Authorization":"`) {
		t.Errorf("the header value is kept: %s", out[0].Raw)
	}
	if string(frames[0].Raw) == string(out[0].Raw) {
		t.Error("the recording's own frame was changed in place or not redacted")
	}
	if meta.Env["AGENTTY_API_TOKEN"] == "hunter2" {
		t.Errorf("the token variable is kept: %v", meta.Env)
	}
	if meta.Redaction == nil {
		t.Error("the header does not say what was redacted")
	}
	if meta.Bytes.Out != int64(len(out[0].Raw)) || meta.Bytes.In != int64(len(out[1].Raw)) {
		t.Errorf("byte counts %+v, frames %d and %d bytes", meta.Bytes, len(out[0].Raw), len(out[1].Raw))
	}
}
