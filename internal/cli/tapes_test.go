package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/tape"
)

// tapeOf writes a tape of meta and frames.
func tapeOf(t testing.TB, meta frame.Session, frames []frame.Frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := tape.WriteAll(&buf, &meta, frames); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// roundTrip records input through the tee fixture, exports it, imports the
// tape into a fresh store and exports again: the two tapes must be
// byte-identical and every frame's bytes must be what crossed.
func roundTrip(t *testing.T, input []byte) {
	t.Helper()
	first := t.TempDir()
	if r := recordFixture(t, first, "tee", input); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	a := tapedeck(t, first, nil, nil, "export", "last")
	if a.code != 0 {
		t.Fatalf("export: exit %d: %s", a.code, a.stderr)
	}
	second := t.TempDir()
	path := writeFile(t, "session.tape", a.stdout)
	if r := tapedeck(t, second, nil, nil, "import", path); r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	b := tapedeck(t, second, nil, nil, "export", "last")
	if b.code != 0 {
		t.Fatalf("export after import: exit %d: %s", b.code, b.stderr)
	}
	if !bytes.Equal(a.stdout, b.stdout) {
		t.Fatalf("export → import → export changed the tape (%d bytes, then %d)", len(a.stdout), len(b.stdout))
	}
	_, frames := exported(t, second, "last")
	for _, d := range []frame.Dir{frame.In, frame.Out, frame.Err} {
		if got := stream(frames, d); !bytes.Equal(got, input) {
			t.Errorf("%s frames after the round trip give %d bytes, want the %d that crossed", d, len(got), len(input))
		}
	}
	// And the store holds them as show --raw prints them.
	if r := tapedeck(t, second, nil, nil, "show", "--raw", "--dir", "err", "last"); !bytes.Equal(r.stdout, input) {
		t.Errorf("show --raw --dir err after import gives %d bytes, want %d", len(r.stdout), len(input))
	}
}

func TestTapeRoundTripEdgeCases(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		input []byte
	}{
		{"invalid UTF-8", []byte("\xff\xfe\n{\"a\":\"\xc3\x28\"}\n\xed\xa0\x80\n")},
		{"CR", []byte("{\"a\":1}\r\n\r\n\rx\r\n")},
		{"last line without newline", []byte("{\"a\":1}\n{\"last\":true}")},
		{"NUL, escapes, separators", []byte("\x00\x1b[31m\n\u2028\u2029\n{\"s\":\"\\u0000\"}\n")},
		{"20 MiB line", append(bytes.Repeat([]byte(`{"k":"0123456789abcdef"},`), 20<<20/25), '\n')},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if len(c.input) > 1<<20 {
				skipBigUnderRace(t)
			}
			roundTrip(t, c.input)
		})
	}
}

func TestTapeRoundTripJSONTestSuite(t *testing.T) {
	t.Parallel()
	roundTrip(t, jsonTestSuite(t))
}

func TestImportRefusesBadTapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	meta, frames := fakeSession("good", "p", time.Date(2025, 2, 2, 0, 0, 0, 0, time.UTC))
	good := tapeOf(t, meta, frames)
	goodPath := writeFile(t, "good.tape", good)
	lines := strings.SplitAfter(string(good), "\n")

	newer := writeFile(t, "newer.tape", []byte(`{"tapedeck":2,"session":{"id":"x"}}`+"\n"))
	broken := writeFile(t, "broken.tape", []byte(lines[0]+lines[1]+`{"seq":2,"at":5,"dir":"sideways","text":"x"}`+"\n"))
	notATape := writeFile(t, "notes.txt", []byte("hello\n"))
	for _, tt := range []struct {
		path, want string
	}{
		{newer, "import " + newer + ": tape format is newer than this tapedeck: the tape is version 2, this tapedeck reads versions up to 1: upgrade tapedeck"},
		{broken, "import " + broken + `: tape line 3: "dir" must be in, out or err`},
		{notATape, "import " + notATape + ": tape line 1: not valid JSON"},
		{filepath.Join(dir, "missing.tape"), "no such file or directory"},
	} {
		r := tapedeck(t, dir, nil, nil, "import", tt.path)
		got := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
		if r.code != 1 || len(got) != 1 || !strings.Contains(got[0], tt.want) {
			t.Errorf("import %s: exit %d, stderr %q; want 1 and one line with %q", filepath.Base(tt.path), r.code, r.stderr, tt.want)
		}
	}
	if list := lsJSON(t, dir); len(list) != 0 {
		t.Fatalf("refused tapes left %d sessions behind", len(list))
	}
	checkDB(t, dir)

	// Good tapes go in even beside bad ones; the exit status says one failed.
	r := tapedeck(t, dir, nil, nil, "import", broken, goodPath)
	if r.code != 1 || !strings.Contains(string(r.stdout), "imported "+meta.ID+" (good): 4 frames") {
		t.Errorf("import broken good: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tapedeck(t, dir, nil, nil, "import", goodPath)
	if r.code != 1 || !strings.Contains(string(r.stderr), "session "+meta.ID+" is stored already") {
		t.Errorf("importing twice: exit %d, stderr %q", r.code, r.stderr)
	}
	r = tapedeck(t, dir, good, nil, "import", "-")
	if r.code != 1 || !strings.Contains(string(r.stderr), "stored already") {
		t.Errorf("import - (stdin): exit %d, stderr %q", r.code, r.stderr)
	}
	if r := tapedeck(t, dir, nil, nil, "import"); r.code != 2 {
		t.Errorf("import without files: exit %d, want 2", r.code)
	}
	// The store fills in what the frames tell (counts, the plugin); from
	// then on export → import → export is the identity.
	a := tapedeck(t, dir, nil, nil, "export", "good")
	again := t.TempDir()
	tapedeck(t, again, nil, nil, "import", writeFile(t, "a.tape", a.stdout))
	if b := tapedeck(t, again, nil, nil, "export", "good"); !bytes.Equal(a.stdout, b.stdout) || !strings.Contains(string(a.stdout), `"plugin":{"id":"p"`) {
		t.Errorf("export → import → export:\n%s\nthen\n%s", a.stdout, b.stdout)
	}
}

// secretSession has what users would not share: a net/fetch request with
// credentials, a session/get answer with the user's turns, a storage value.
func secretSession() (frame.Session, []frame.Frame) {
	meta, _ := fakeSession("secrets", "p", time.Date(2025, 4, 4, 0, 0, 0, 0, time.UTC))
	raw := func(seq uint64, d frame.Dir, s string) frame.Frame {
		return frame.Frame{Seq: seq, At: int64(seq) * 1000, Dir: d, Raw: []byte(s)}
	}
	return meta, []frame.Frame{
		initFrame(1, "p", "1.0.0"),
		raw(2, frame.Out, `{"jsonrpc":"2.0","id":1,"method":"net/fetch","params":{"url":"https://api.example","headers":{"Authorization":"Bearer hunter2","X-Api-Key":"k-123","Accept":"application/json"}}}`),
		raw(3, frame.In, `{"jsonrpc":"2.0","id":1,"result":{"status":200,"headers":{"set-cookie":"sid=abc"},"body":"{}"}}`),
		raw(4, frame.Out, `{"jsonrpc":"2.0","id":2,"method":"session/get","params":{"maxTurns":2}}`),
		raw(5, frame.In, `{"jsonrpc":"2.0","id":2,"result":{"paneId":"p1","turns":[{"role":"user","text":"my password is swordfish"},{"role":"agent","text":"noted"}]}}`),
		raw(6, frame.Out, `{"jsonrpc":"2.0","id":3,"method":"storage/set","params":{"key":"token","value":{"nested":{"value":"hunter2"}}}}`),
		raw(7, frame.Out, `{"jsonrpc":"2.0","id":4,"method":"net/fetch","params":{"url":"https://api.example","headers":{"Authorization":"Bearer hunter2"}}}`),
		raw(8, frame.Err, "debug: using sk-live-0123456789abcdef"),
	}
}

func TestExportRedacts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putSessions(t, dir, 1, func(int) (frame.Session, []frame.Frame) { return secretSession() })
	_, stored := secretSession()

	export := func(env []string, args ...string) (result, []frame.Frame) {
		t.Helper()
		r := tapedeck(t, dir, nil, env, append([]string{"export", "secrets"}, args...)...)
		if r.code != 0 {
			t.Fatalf("export %v: exit %d: %s", args, r.code, r.stderr)
		}
		tr, err := tape.NewReader(bytes.NewReader(r.stdout))
		if err != nil {
			t.Fatal(err)
		}
		var fs []frame.Frame
		for {
			f, err := tr.Next()
			if err != nil {
				break
			}
			c := *f
			c.Raw = bytes.Clone(f.Raw)
			fs = append(fs, c)
		}
		return r, fs
	}

	// By default: credential headers only, said on stderr.
	r, fs := export(nil)
	if bytes.Contains(r.stdout, []byte("Bearer hunter2")) || bytes.Contains(r.stdout, []byte("k-123")) || bytes.Contains(r.stdout, []byte("sid=abc")) {
		t.Errorf("default export kept credentials:\n%s", r.stdout)
	}
	if want := "tapedeck: export: redacted 4 credential-like values (--no-default-redactions keeps them)\n"; string(r.stderr) != want {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	for _, i := range []int{0, 3, 4, 5, 7} {
		if !bytes.Equal(fs[i].Raw, stored[i].Raw) {
			t.Errorf("untouched frame %d changed:\n%s\nwant\n%s", i+1, fs[i].Raw, stored[i].Raw)
		}
	}
	// Touched frames change only the redacted values; the same value gets the same placeholder.
	ph := between(string(fs[1].Raw), `"Authorization":"`, `"`)
	if !strings.HasPrefix(ph, "«redacted:") || between(string(fs[6].Raw), `"Authorization":"`, `"`) != ph {
		t.Errorf("placeholders: %q and %q", ph, between(string(fs[6].Raw), `"Authorization":"`, `"`))
	}
	if want := strings.Replace(string(stored[6].Raw), "Bearer hunter2", ph, 1); string(fs[6].Raw) != want {
		t.Errorf("redacted frame:\n%s\nwant\n%s", fs[6].Raw, want)
	}

	r, _ = export(nil, "--no-default-redactions")
	if !bytes.Contains(r.stdout, []byte("Bearer hunter2")) || len(r.stderr) != 0 {
		t.Errorf("--no-default-redactions: stderr %q", r.stderr)
	}

	r, _ = export(nil, "--no-default-redactions",
		"--redact", "session/get:result.turns[*].text",
		"--redact", "storage/set:params..value",
		"--redact", "ui/*:params.nothing",
		"--redact-regex", `sk-live-[0-9a-f]+`)
	// (The tape's header names the rules, so that a replay redacts the
	// same way: the pattern sk-live-[0-9a-f]+ is there, its matches are not.)
	for _, secret := range []string{"swordfish", "noted", "nested", "sk-live-0123456789abcdef"} {
		if bytes.Contains(r.stdout, []byte(secret)) {
			t.Errorf("--redact kept %q", secret)
		}
	}
	if !bytes.Contains(r.stdout, []byte(`"role":"user"`)) || !bytes.Contains(r.stdout, []byte(`"key":"token"`)) {
		t.Errorf("--redact took more than the values named:\n%s", r.stdout)
	}
	wantErr := "tapedeck: export: redacted 2 values at session/get:result.turns[*].text\n" +
		"tapedeck: export: redacted 1 value at storage/set:params..value\n" +
		"tapedeck: export: redacted 0 values at ui/*:params.nothing\n" +
		"tapedeck: export: redacted 1 match of --redact-regex sk-live-[0-9a-f]+\n"
	if string(r.stderr) != wantErr {
		t.Errorf("stderr:\n%s\nwant\n%s", r.stderr, wantErr)
	}

	// The same key gives the same placeholders in another store.
	a, _ := export([]string{"TAPEDECK_REDACT_KEY=team"})
	other := t.TempDir()
	putSessions(t, other, 1, func(int) (frame.Session, []frame.Frame) { return secretSession() })
	b := tapedeck(t, other, nil, []string{"TAPEDECK_REDACT_KEY=team"}, "export", "secrets")
	body := func(b []byte) []byte { _, rest, _ := bytes.Cut(b, []byte("\n")); return rest } // ids differ
	if !bytes.Equal(body(a.stdout), body(b.stdout)) {
		t.Error("the same TAPEDECK_REDACT_KEY gave different placeholders in two stores")
	}
	// A redacted tape survives export → import → export unchanged.
	imp := t.TempDir()
	tapedeck(t, imp, nil, nil, "import", writeFile(t, "r.tape", a.stdout))
	if c := tapedeck(t, imp, nil, nil, "export", "secrets"); !bytes.Equal(c.stdout, a.stdout) || len(c.stderr) != 0 {
		t.Errorf("re-export of a redacted tape changed it (stderr %q)", c.stderr)
	}

	for _, bad := range [][]string{{"--redact", "params.x"}, {"--redact", "net/fetch:params..", "--no-default-redactions"}, {"--redact-regex", "("}, {"--redact-regex", "x*"}} {
		r := tapedeck(t, dir, nil, nil, append([]string{"export", "secrets"}, bad...)...)
		if r.code != 2 || bytes.Count(r.stderr, []byte("\n")) != 1 || len(r.stdout) != 0 {
			t.Errorf("export %v: exit %d, stderr %q; want 2 and one line", bad, r.code, r.stderr)
		}
	}
}

func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}

func TestRecordRedactKeepsSecretsOutOfTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := []byte(`{"jsonrpc":"2.0","id":1,"method":"net/fetch","params":{"headers":{"Authorization":"Bearer hunter2"}}}` + "\n" +
		"{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"line\":\"key sk-live-99\"}}\n")
	argv, env := fixture("echo")
	r := tapedeck(t, dir, input, env, append([]string{"record", "--redact", "net/fetch:params.headers.Authorization", "--redact-regex", `sk-live-[0-9]+`}, argv...)...)
	if r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	if !bytes.Equal(r.stdout, input) {
		t.Fatalf("redaction changed what was forwarded:\n%q", r.stdout)
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte("hunter2")) || bytes.Contains(b, []byte("sk-live-99")) {
				t.Errorf("%s holds a redacted secret", p)
			}
		}
		return nil
	})
	_, frames := exported(t, dir, "last")
	for _, d := range []frame.Dir{frame.In, frame.Out} {
		if n := strings.Count(string(stream(frames, d)), "«redacted:"); n != 2 {
			t.Errorf("stored %s frames have %d placeholders, want 2:\n%s", d, n, stream(frames, d))
		}
	}
	if r := tapedeck(t, dir, input, env, append([]string{"record", "--redact", "nocolon"}, argv...)...); r.code != 2 || len(r.stdout) != 0 {
		t.Errorf("record with a bad rule: exit %d, stdout %q (the plugin must not run)", r.code, r.stdout)
	}
}

func TestExportToFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putSessions(t, dir, 1, func(int) (frame.Session, []frame.Frame) { return fakeSession("f", "p", time.Now()) })
	out := filepath.Join(t.TempDir(), "s.tape")
	if r := tapedeck(t, dir, nil, nil, "export", "-o", out, "last"); r.code != 0 || len(r.stdout) != 0 {
		t.Fatalf("export -o: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(b, []byte(`{"tapedeck":1,"session":`)) {
		t.Fatalf("the tape file: %v %q", err, b)
	}
	// The missing folders are made.
	deep := filepath.Join(t.TempDir(), "no", "such", "dir", "s.tape")
	if r := tapedeck(t, dir, nil, nil, "export", "-o", deep, "last"); r.code != 0 {
		t.Errorf("export into a missing folder: exit %d, stderr %q", r.code, r.stderr)
	} else if _, err := os.Stat(deep); err != nil {
		t.Errorf("export into a missing folder: %v", err)
	}
	// A folder that cannot be: one line naming the file, exit 1.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	r := tapedeck(t, dir, nil, nil, "export", "-o", filepath.Join(file, "s.tape"), "last")
	if r.code != 1 || bytes.Count(r.stderr, []byte("\n")) != 1 || !bytes.Contains(r.stderr, []byte("write "+filepath.Join(file, "s.tape")+": ")) {
		t.Errorf("export under a file: exit %d, stderr %q", r.code, r.stderr)
	}
}
