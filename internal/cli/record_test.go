package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// checkFidelity records input through the echo (or tee) fixture and checks
// that the plugin got exactly the input, the host got exactly what the
// plugin wrote, and the stored frames give both back.
func checkFidelity(t *testing.T, mode string, input []byte) {
	t.Helper()
	store := t.TempDir()
	r := recordFixture(t, store, mode, input)
	if r.code != 0 {
		t.Fatalf("record exit %d: %s", r.code, r.stderr)
	}
	if !bytes.Equal(r.stdout, input) {
		t.Fatalf("stdout differs from input: %d bytes vs %d", len(r.stdout), len(input))
	}
	if mode == "tee" && !bytes.Equal(r.stderr, input) {
		t.Fatalf("stderr differs from input: %d bytes vs %d", len(r.stderr), len(input))
	}
	meta, frames := exported(t, store, "last")
	if meta.Status != frame.StatusComplete {
		t.Errorf("status %q, want complete", meta.Status)
	}
	if got := stream(frames, frame.In); !bytes.Equal(got, input) {
		t.Errorf("stored stdin frames give back %d bytes, want %d", len(got), len(input))
	}
	if got := stream(frames, frame.Out); !bytes.Equal(got, input) {
		t.Errorf("stored stdout frames give back %d bytes, want %d", len(got), len(input))
	}
	if mode == "tee" {
		if got := stream(frames, frame.Err); !bytes.Equal(got, input) {
			t.Errorf("stored stderr frames give back %d bytes, want %d", len(got), len(input))
		}
	}
}

func TestRecordByteExact(t *testing.T) {
	t.Parallel()
	burst := new(bytes.Buffer)
	for i := range 10000 {
		fmt.Fprintf(burst, `{"jsonrpc":"2.0","method":"tick","params":{"n":%d}}`+"\n", i)
	}
	line16 := append(bytes.Repeat([]byte("x"), 16<<20), '\n')
	line20 := append(bytes.Repeat([]byte("{\"a\":1}"), 20<<20/7), '\n')
	cases := []struct {
		name, mode string
		input      []byte
	}{
		{"crlf", "tee", []byte("{\"a\":1}\r\n{\"b\":2}\r\n")},
		{"blank lines", "tee", []byte("\n\n{}\n\n")},
		{"batch array", "echo", []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n")},
		{"no final newline", "tee", []byte("{\"a\":1}\n{\"last\":true}")},
		{"nul and invalid utf8", "tee", []byte("\x00\xff\xfe\n\xe2\x80\xa8\n")},
		{"burst of 10000", "echo", burst.Bytes()},
		{"exactly 16 MiB", "echo", line16},
		{"20 MiB", "echo", line20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if len(c.input) > 1<<20 {
				skipBigUnderRace(t)
			}
			checkFidelity(t, c.mode, c.input)
		})
	}
}

func TestRecordJSONTestSuite(t *testing.T) {
	t.Parallel()
	checkFidelity(t, "tee", jsonTestSuite(t))
}

func TestRecordCutsOverlongFrames(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	line := bytes.Repeat([]byte("y"), 100000)
	input := append(append([]byte("small\n"), line...), '\n')
	argv, env := fixture("echo")
	r := tapedeck(t, store, input, env, append([]string{"record", "--max-frame", "1000"}, argv...)...)
	if r.code != 0 || !bytes.Equal(r.stdout, input) {
		t.Fatalf("exit %d, %d bytes out of %d", r.code, len(r.stdout), len(input))
	}
	_, frames := exported(t, store, "last")
	var cut *frame.Frame
	for i := range frames {
		if frames[i].Cut != nil && frames[i].Dir == frame.Out {
			cut = &frames[i]
		}
	}
	if cut == nil {
		t.Fatal("no stdout frame is marked cut")
	}
	if len(cut.Raw) != 1000 || cut.Cut.Len != int64(len(line)) || cut.Cut.SHA256 != sha256.Sum256(line) {
		t.Errorf("cut frame: %d bytes kept, len %d, hash ok %v", len(cut.Raw), cut.Cut.Len, cut.Cut.SHA256 == sha256.Sum256(line))
	}
}

func TestRecordMetadata(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "missing", "parent")
	input := []byte(`{"jsonrpc":"2.0","id":41,"method":"initialize","params":{"apiVersion":2,"agentty":{"version":"1.4.0"},"plugin":{"id":"weather","name":"Weather","version":"0.3.0"}}}` + "\n")
	argv, env := fixture("echo", "AGENTTY_PLUGIN_ID=weather", "AGENTTY_LANGUAGE=de")
	r := tapedeck(t, store, input, env, append([]string{"record", "--name", "demo", "--tag", "team=ui"}, argv...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	list := lsJSON(t, store)
	if len(list) != 1 {
		t.Fatalf("ls lists %d sessions, want 1", len(list))
	}
	s := list[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"name", s.Name, "demo"},
		{"tag", s.Tags["team"], "ui"},
		{"plugin id", s.Plugin.ID, "weather"},
		{"plugin version", s.Plugin.Version, "0.3.0"},
		{"apiVersion", s.APIVersion, 2},
		{"host version", s.HostVersion, "1.4.0"},
		{"env", s.Env["AGENTTY_LANGUAGE"], "de"},
		{"status", s.Status, "complete"},
		{"frames in", s.Frames.In, int64(1)},
		{"frames out", s.Frames.Out, int64(1)},
		{"command", strings.Join(s.Command, " "), os.Args[0]},
		{"exit", s.Exit.Code != nil && *s.Exit.Code == 0, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if s.Ended == nil || s.Ended.Before(s.Started) {
		t.Errorf("ended %v before started %v", s.Ended, s.Started)
	}
	fi, err := os.Stat(store)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("store folder mode %v, want 0700", fi.Mode().Perm())
	}
	db, err := os.Stat(filepath.Join(store, "tapedeck.db"))
	if err != nil || db.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v, want 0600 (%v)", db.Mode().Perm(), err)
	}
}
