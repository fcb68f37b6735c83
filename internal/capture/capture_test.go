package capture_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/capture"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/internal/store"
)

// input is a file holding s, for a plugin's stdin.
func input(t *testing.T, s string) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func run(t *testing.T, opt *capture.Options) *capture.Result {
	t.Helper()
	if opt.Signals == nil {
		opt.Signals = make(chan os.Signal) // nothing is signalled
	}
	res, err := capture.Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// stored is the session id of the store in dir, and its lines per
// direction ("in hello") and events ("exit 3", "signal SIGTERM").
func stored(t *testing.T, dir, id string) (*frame.Session, map[frame.Dir][]string, []string) {
	t.Helper()
	st, err := store.Open(dir, &store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := st.Session(id)
	if err != nil {
		t.Fatalf("session %s: %v", id, err)
	}
	lines := map[frame.Dir][]string{}
	var events []string
	err = st.Frames(id, func(f *frame.Frame) error {
		switch {
		case !f.IsEvent():
			lines[f.Dir] = append(lines[f.Dir], string(f.Raw))
		case f.Code() != nil:
			events = append(events, f.Event.String()+" "+strconv.Itoa(*f.Code()))
		case f.Signal() != "":
			events = append(events, f.Event.String()+" "+f.Signal())
		default:
			events = append(events, f.Event.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return meta, lines, events
}

func TestRunRecordsTheSession(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	res := run(t, &capture.Options{
		Command:  []string{"/bin/sh", "-c", `read l; echo "$l"; echo oops >&2; exit 3`},
		Dir:      t.TempDir(),
		Name:     "echo",
		Tags:     map[string]string{"k": "v"},
		StoreDir: dir,
		Stdin:    input(t, "hello\n"),
		Stdout:   &stdout,
		Stderr:   &stderr,
		Version:  "v1.2.3",
	})
	if res.Code != 3 || res.Signal != "" || res.StartFailure != "" || !res.Recorded || res.Session == "" {
		t.Fatalf("result %+v, want code 3, recorded", res)
	}
	if stdout.String() != "hello\n" || stderr.String() != "oops\n" {
		t.Errorf("relayed stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	meta, lines, events := stored(t, dir, res.Session)
	if meta.Status != frame.StatusComplete || meta.Exit.Code == nil || *meta.Exit.Code != 3 {
		t.Errorf("stored status %q, exit %+v; want complete, code 3", meta.Status, meta.Exit)
	}
	if meta.Name != "echo" || meta.Tags["k"] != "v" || meta.Tapedeck != "v1.2.3" || meta.Command[0] != "/bin/sh" {
		t.Errorf("stored header %+v", meta)
	}
	if meta.Fingerprint == nil {
		t.Error("no fingerprint stored")
	}
	want := map[frame.Dir][]string{frame.In: {"hello"}, frame.Out: {"hello"}, frame.Err: {"oops"}}
	for d, w := range want {
		if strings.Join(lines[d], "|") != strings.Join(w, "|") {
			t.Errorf("stored %v lines %q, want %q", d, lines[d], w)
		}
	}
	if len(events) == 0 || events[len(events)-1] != "exit 3" {
		t.Errorf("events %q, want the last to be exit 3", events)
	}
}

// notify is a writer that closes ready once it has been written "ready".
type notify struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
	ready chan struct{}
}

func (n *notify) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.buf.Write(p)
	if strings.Contains(n.buf.String(), "ready\n") {
		n.once.Do(func() { close(n.ready) })
	}
	return len(p), nil
}

func TestRunPassesSignalsOn(t *testing.T) {
	dir := t.TempDir()
	sigs := make(chan os.Signal, 1)
	out := &notify{ready: make(chan struct{})}
	go func() {
		<-out.ready
		sigs <- syscall.SIGTERM
	}()
	res := run(t, &capture.Options{
		Command:       []string{"/bin/sh", "-c", "echo ready; exec sleep 60"},
		StoreDir:      dir,
		Stdout:        out,
		Signals:       sigs,
		NoFingerprint: true,
	})
	if res.Code != 128+int(syscall.SIGTERM) || res.Signal != "SIGTERM" {
		t.Fatalf("result %+v, want 143 SIGTERM", res)
	}
	meta, _, events := stored(t, dir, res.Session)
	if meta.Exit.Signal != "SIGTERM" || meta.Exit.Code != nil {
		t.Errorf("stored exit %+v, want SIGTERM", meta.Exit)
	}
	if !strings.Contains(strings.Join(events, ","), "signal SIGTERM") {
		t.Errorf("events %q have no signal", events)
	}
}

func TestRunRelayOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	var stdout bytes.Buffer
	res, err := capture.Run(context.Background(), &capture.Options{
		Command:  []string{"/bin/sh", "-c", `read l; echo "$l"; exit 5`},
		StoreDir: dir,
		NoRecord: true,
		Stdin:    input(t, "hi\n"),
		Stdout:   &stdout,
		// Signals nil: Run relays this process's own, until it returns.
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != 5 || res.Recorded {
		t.Errorf("result %+v, want code 5, not recorded", res)
	}
	if stdout.String() != "hi\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("relay-only made the store: %v", err)
	}
}

func TestRunStartFailure(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing")
	plain := filepath.Join(tmp, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cmd      string
		noRecord bool
		code     int
		msg      string
	}{
		{missing, false, 127, missing + ": command not found"},
		{missing, true, 127, missing + ": command not found"},
		{plain, false, 126, plain + ": permission denied (not executable)"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		var stderr bytes.Buffer
		res := run(t, &capture.Options{Command: []string{c.cmd}, StoreDir: dir, NoRecord: c.noRecord, Stderr: &stderr})
		if res.Code != c.code || res.StartFailure != c.msg || res.Recorded == c.noRecord {
			t.Errorf("%s (no-record %v): result %+v, want %d %q", c.cmd, c.noRecord, res, c.code, c.msg)
			continue
		}
		if stderr.Len() > 0 {
			t.Errorf("stderr %q: the front-end prints the start failure", stderr.String())
		}
		if c.noRecord {
			continue
		}
		meta, _, _ := stored(t, dir, res.Session)
		if meta.Status != frame.StatusFailedToStart || meta.Error != c.msg {
			t.Errorf("stored status %q, error %q", meta.Status, meta.Error)
		}
	}
}

func TestRunHostScript(t *testing.T) {
	tmp := t.TempDir()
	script := filepath.Join(tmp, "host.jsonl")
	err := os.WriteFile(script, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
{"send":{"jsonrpc":"2.0","method":"bye"},"after":{"reply":1}}
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	host, err := capture.ReadHostScript(script)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	res := run(t, &capture.Options{
		Command:       []string{"/bin/sh", "-c", `read l; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read m; echo "$m" >&2`},
		StoreDir:      dir,
		Host:          host,
		Stdin:         input(t, "not for the plugin\n"),
		Stdout:        &stdout,
		Stderr:        &stderr,
		NoFingerprint: true,
	})
	if res.Code != 0 || !res.Recorded {
		t.Fatalf("result %+v", res)
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout %q: with a host script it stays empty", stdout.String())
	}
	_, lines, _ := stored(t, dir, res.Session)
	if len(lines[frame.In]) != 2 || !strings.Contains(lines[frame.In][1], `"bye"`) {
		t.Errorf("host frames %q", lines[frame.In])
	}
	if len(lines[frame.Out]) != 1 || len(lines[frame.Err]) != 1 || lines[frame.Err][0] != lines[frame.In][1] {
		t.Errorf("plugin said %q, %q", lines[frame.Out], lines[frame.Err])
	}
}

func TestReadHostScriptErrors(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing.jsonl")
	if _, err := capture.ReadHostScript(missing); err == nil || err.Error() != "--host: open "+missing+": no such file or directory" {
		t.Errorf("missing script: %v", err)
	}
	bad := filepath.Join(tmp, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capture.ReadHostScript(bad); err == nil || !strings.HasPrefix(err.Error(), "--host "+bad+": bad host script: line 1: ") {
		t.Errorf("bad script: %v", err)
	}
}

func TestRunRedacts(t *testing.T) {
	dir := t.TempDir()
	var stdout bytes.Buffer
	res := run(t, &capture.Options{
		Command:       []string{"/bin/sh", "-c", `read l; echo "$l"`},
		StoreDir:      dir,
		Redact:        redact.Config{Regexps: []*regexp.Regexp{regexp.MustCompile(`sk-[0-9]+`)}},
		RedactKey:     []byte("0123456789abcdef0123456789abcdef"),
		Stdin:         input(t, "token sk-12345\n"),
		Stdout:        &stdout,
		NoFingerprint: true,
	})
	if stdout.String() != "token sk-12345\n" {
		t.Errorf("relayed %q: redaction must not touch what is relayed", stdout.String())
	}
	meta, lines, _ := stored(t, dir, res.Session)
	if meta.Redaction == nil {
		t.Error("the session does not say it was redacted")
	}
	for d, ls := range lines {
		for _, l := range ls {
			if strings.Contains(l, "sk-12345") {
				t.Errorf("stored %v line %q keeps the secret", d, l)
			}
		}
	}
}

// A store that cannot be had is said on Log, not on the plugin's stderr,
// and the plugin runs unrecorded.
func TestRunUnrecordedWhenNoStore(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr, log bytes.Buffer
	res := run(t, &capture.Options{
		Command:  []string{"/bin/sh", "-c", `echo out; echo err >&2`},
		StoreDir: file,
		Stdout:   &stdout,
		Stderr:   &stderr,
		Log:      &log,
	})
	if res.Code != 0 || res.Recorded {
		t.Errorf("result %+v, want 0, not recorded", res)
	}
	if stdout.String() != "out\n" || stderr.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	if !strings.HasPrefix(log.String(), "tapedeck: cannot record (") || !strings.HasSuffix(log.String(), "); the plugin runs unrecorded\n") {
		t.Errorf("log %q", log.String())
	}
}

func TestRunNeedsACommand(t *testing.T) {
	if _, err := capture.Run(context.Background(), &capture.Options{}); err == nil {
		t.Error("Run without a command: no error")
	}
	if _, err := capture.Run(context.Background(), nil); err == nil {
		t.Error("Run(nil): no error")
	}
}
