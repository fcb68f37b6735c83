package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHostScriptWaitInVain: a script line that waits for a method the
// plugin never sends is an error naming the line and the method, the exit
// status is not 0, and the stored session says so.
func TestHostScriptWaitInVain(t *testing.T) {
	t.Parallel()
	script := writeFile(t, "host.jsonl", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"+
		`// a comment line counts as a line`+"\n"+
		`{"send":{"jsonrpc":"2.0","method":"panel/open"},"after":"never/comes"}`+"\n"))
	store := t.TempDir()
	start := time.Now()
	r := tapedeck(t, store, nil, nil, "record", "--host", script, "--step-timeout", "1s", "--", "sh", "-c", "cat >/dev/null")
	// How long it waited is measured: at least the step timeout, any more.
	want := regexp.MustCompile(`script line 3 waited [0-9.]+m?s \(--step-timeout\) for never/comes, which never came`)
	if r.code == 0 || !regexp.MustCompile(`(?m)^tapedeck: record --host: `+want.String()).Match(r.stderr) {
		t.Errorf("record --host: exit %d, stderr:\n%s\nwant non-zero and %v", r.code, r.stderr, want)
	}
	if d := time.Since(start); d > 1*time.Second+20*time.Second {
		t.Errorf("took %v", d)
	}
	list := lsJSON(t, store)
	if len(list) != 1 || !want.MatchString(list[0].Error) {
		t.Fatalf("stored session: %+v, want its error to say %v", list, want)
	}
	if r := tapedeck(t, store, nil, nil, "show", list[0].ID); r.code != 0 || !regexp.MustCompile(`(?m)^error +`+want.String()).Match(r.stdout) {
		t.Errorf("show: exit %d, the header does not say the error:\n%s", r.code, r.stdout)
	}

	// A reply awaited in vain names the request.
	script = writeFile(t, "reply.jsonl", []byte(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}`+"\n"+
		`{"send":{"jsonrpc":"2.0","method":"panel/open"},"after":{"reply":5}}`+"\n"))
	r = tapedeck(t, t.TempDir(), nil, nil, "record", "--host", script, "--step-timeout", "1s", "--", "sh", "-c", "cat >/dev/null")
	if r.code == 0 || !regexp.MustCompile(`script line 2 waited [0-9.]+m?s \(--step-timeout\) for the reply to request 5`).Match(r.stderr) {
		t.Errorf("a reply awaited in vain: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	// A wait that is met is no error.
	script = writeFile(t, "met.jsonl", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"+
		`{"send":{"jsonrpc":"2.0","method":"panel/open"},"after":"ui/ready"}`+"\n"))
	r = tapedeck(t, store, nil, nil, "record", "--host", script, "--step-timeout", "20s", "--", "sh", "-c", `echo '{"jsonrpc":"2.0","method":"ui/ready"}'; cat >/dev/null`)
	if r.code != 0 || strings.Contains(string(r.stderr), "never came") {
		t.Errorf("a met wait: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestRecordNewsOnATerminal: with stderr on a terminal, record ends with
// one line naming the session, its frames and its store; with stderr
// elsewhere it says nothing, and stdout is the plugin's alone either way.
func TestRecordNewsOnATerminal(t *testing.T) {
	t.Parallel()
	m, s, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	store := t.TempDir()
	cmd := exec.Command(tapedeckBin, "--store", store, "record", "--name", "news", "--", "sh", "-c", `echo '{"jsonrpc":"2.0","method":"x"}'`)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var tty strings.Builder
	read := make(chan struct{})
	go func() { // ends with EIO once the child is gone
		defer close(read)
		io.Copy(&tty, bufio.NewReader(m))
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record: %v", err)
	}
	<-read
	m.Close()
	want := "tapedeck: recorded news ("
	if got := tty.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, want) || !strings.Contains(got, "1 frame (0 in, 1 out, 0 err) in "+store) {
		t.Errorf("the terminal got %q, want one line %q… 1 frame … in %s", got, want, store)
	}
	if out.String() != `{"jsonrpc":"2.0","method":"x"}`+"\n" {
		t.Errorf("stdout %q is not the plugin's alone", out.String())
	}
	r := tapedeckBinary(t, t.TempDir(), nil, nil, "record", "--", "sh", "-c", "echo hi")
	if r.code != 0 || len(r.stderr) != 0 {
		t.Errorf("record off a terminal: exit %d, stderr %q; want nothing said", r.code, r.stderr)
	}
}

// TestWrittenPathsAreSaid: export -o, test --html, test --junit, replay
// --html and show --html say on
// stderr what they wrote; stdout keeps only its data.
func TestWrittenPathsAreSaid(t *testing.T) {
	t.Parallel()
	mini := recordMini(t)
	store, dir := t.TempDir(), t.TempDir()
	if r := tapedeck(t, store, nil, nil, "import", mini); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	out := filepath.Join(dir, "out.jsonl")
	r := tapedeck(t, store, nil, nil, "export", "mini", "-o", out)
	if r.code != 0 || string(r.stderr) != "tapedeck: wrote "+out+"\n" || len(r.stdout) != 0 {
		t.Errorf("export -o: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	junit, html := filepath.Join(dir, "j.xml"), filepath.Join(dir, "html")
	r = tapedeck(t, store, nil, []string{"TAPEDECK_FIXTURE=mini"}, "test", "--json", "--junit", junit, "--html", html, mini)
	for _, want := range []string{"tapedeck: wrote " + junit + "\n", "tapedeck: wrote " + filepath.Join(html, "index.html") + "\n"} {
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("test --junit --html: stderr %q lacks %q", r.stderr, want)
		}
	}
	if r.code != 0 || bytes.Contains(r.stdout, []byte("wrote")) {
		t.Errorf("test --json: exit %d, stdout %q", r.code, r.stdout)
	}
	replayHTML, showHTML := filepath.Join(dir, "replay.html"), filepath.Join(dir, "show.html")
	r = tapedeck(t, store, nil, []string{"TAPEDECK_FIXTURE=mini"}, "replay", "--html", replayHTML, mini)
	if r.code != 0 || !strings.Contains(string(r.stderr), "tapedeck: wrote "+replayHTML+"\n") {
		t.Errorf("replay --html: exit %d, stderr %q", r.code, r.stderr)
	}
	r = tapedeck(t, store, nil, nil, "show", "--html", showHTML, "mini")
	if r.code != 0 || string(r.stderr) != "tapedeck: wrote "+showHTML+"\n" || len(r.stdout) != 0 {
		t.Errorf("show --html: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{out, junit, filepath.Join(html, "index.html"), replayHTML, showHTML} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("said %s, but: %v", p, err)
		}
	}
}

// TestWrapAndDoctorAgree: a plugin whose id is not its folder's name is
// refused by wrap and a problem for doctor, with the host's rule.
func TestWrapAndDoctorAgree(t *testing.T) {
	t.Parallel()
	const rule = "the host starts a plugin only when its id equals its folder name"
	dir := filepath.Join(t.TempDir(), "folder")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "agentty-plugin.json"), []byte(`{"id":"other","main":"m.py","runtime":"python"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "m.py"), nil, 0o644)
	store := t.TempDir()
	r := tapedeck(t, store, nil, nil, "wrap", dir)
	if r.code != 1 || !strings.Contains(string(r.stderr), rule) {
		t.Errorf("wrap: exit %d, stderr %q; want 1 and the host's rule", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tapedeck")); err == nil {
		t.Error("the refused wrap wrote its launcher")
	}
	// Wrapped under its own name, then renamed: doctor says the same.
	good := filepath.Join(t.TempDir(), "other")
	if err := os.Rename(dir, good); err != nil {
		t.Fatal(err)
	}
	if r := tapedeck(t, store, nil, nil, "wrap", good); r.code != 0 {
		t.Fatalf("wrap: exit %d %s", r.code, r.stderr)
	}
	renamed := filepath.Join(filepath.Dir(good), "renamed")
	if err := os.Rename(good, renamed); err != nil {
		t.Fatal(err)
	}
	r = tapedeck(t, store, nil, nil, "doctor", renamed)
	if r.code != 1 || !strings.Contains(string(r.stderr), "plugin id other: ") || !strings.Contains(string(r.stderr), rule) {
		t.Errorf("doctor: exit %d, stderr %q; want 1 and the host's rule", r.code, r.stderr)
	}
}
