package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTapeNamesAreEscaped names a tape with an escape sequence and a
// right-to-left override: test's lines, "wrote …", the pending hint,
// "awaiting review", review's headers and list, and JUnit's name= all
// print it escaped, never raw.
func TestTapeNamesAreEscaped(t *testing.T) {
	t.Parallel()
	dir, _, golden := pendingCorpus(t)
	name := "evil\x1b]0;pwned\x07\x1b[2J\u202egnp.jsonl"
	tape := filepath.Join(dir, name)
	if err := os.WriteFile(tape, golden[0], 0o644); err != nil {
		t.Fatal(err)
	}
	escaped := `evil\x1b]0;pwned\x07\x1b[2J\u202egnp.jsonl`
	changed := []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	var outputs []struct {
		what string
		r    result
	}
	run := func(what string, stdin []byte, env []string, args ...string) result {
		t.Helper()
		r := tapedeck(t, t.TempDir(), stdin, env, args...)
		outputs = append(outputs, struct {
			what string
			r    result
		}{what, r})
		return r
	}
	if r := run("test", nil, changed, "test", dir); r.code != 1 || !strings.Contains(string(r.stdout), "FAIL  "+filepath.Join(dir, escaped)) {
		t.Errorf("test: exit %d, no escaped FAIL line:\n%s", r.code, r.stdout)
	}
	r := run("test --update", nil, changed, "test", "--update", "--junit", junit, dir)
	if r.code != 0 || !strings.Contains(string(r.stderr), "tapedeck: wrote "+filepath.Join(dir, escaped)+".new") {
		t.Errorf("test --update: exit %d, no escaped wrote line:\n%s", r.code, r.stderr)
	}
	if r := run("test (awaiting review)", nil, []string{"TAPEDECK_FIXTURE=mini"}, "test", dir); !strings.Contains(string(r.stderr), "awaiting review") || !strings.Contains(string(r.stderr), escaped) {
		t.Errorf("test with changes pending: no escaped awaiting-review line:\n%s", r.stderr)
	}
	if r := run("review", []byte("s\ns\ns\n"), nil, "review", dir); !strings.Contains(string(r.stdout), filepath.Join(dir, escaped)+": 1 difference pending") {
		t.Errorf("review: no escaped header:\n%s", r.stdout)
	}
	run("review --list", nil, nil, "review", "--list", dir)
	run("review --list --json", nil, nil, "review", "--list", "--json", dir)
	run("review --accept", nil, nil, "review", "--accept", dir)
	for _, o := range outputs {
		for _, out := range [][]byte{o.r.stdout, o.r.stderr} {
			if bytes.ContainsAny(out, "\x1b\x07\u202e") {
				t.Errorf("%s prints the name raw:\n%q", o.what, out)
			}
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(x, '\u202e') || !bytes.Contains(x, []byte(`name="`+filepath.Join(dir, `evil\x1b]0;pwned\x07\x1b[2J\u202egnp.jsonl`))) {
		t.Errorf("JUnit name= is not the escaped name:\n%s", x)
	}
}

// TestReviewListJSONKeepsNonUTF8Names: a pending change whose name is not
// UTF-8 is listed by review --list --json with its exact bytes (a JSON
// string can only say U+FFFD there).
func TestReviewListJSONKeepsNonUTF8Names(t *testing.T) {
	t.Parallel()
	dir, _, golden := pendingCorpus(t)
	name := "caf\xe9.jsonl"
	if err := os.WriteFile(filepath.Join(dir, name), golden[0], 0o644); err != nil {
		t.Fatal(err)
	}
	if r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}, "test", "--update", dir); r.code != 0 {
		t.Fatalf("test --update: exit %d: %s", r.code, r.stderr)
	}
	r := tapedeck(t, t.TempDir(), nil, nil, "review", "--list", "--json", dir)
	var found bool
	for _, line := range bytes.Split(bytes.TrimSpace(r.stdout), []byte("\n")) {
		var e struct{ Tape, TapeB64, PendingB64 string }
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("review --list --json: %v: %s", err, line)
		}
		if !strings.Contains(e.Tape, "caf") {
			continue
		}
		found = true
		got, _ := base64.StdEncoding.DecodeString(e.TapeB64)
		if string(got) != filepath.Join(dir, name) {
			t.Errorf("tapeB64 decodes to %q, want %q", got, filepath.Join(dir, name))
		}
		if p, _ := base64.StdEncoding.DecodeString(e.PendingB64); string(p) != filepath.Join(dir, name)+".new" {
			t.Errorf("pendingB64 decodes to %q", p)
		}
	}
	if !found {
		t.Errorf("review --list --json lists no café tape:\n%s", r.stdout)
	}
}
