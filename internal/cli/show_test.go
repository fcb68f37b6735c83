package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/store"
)

// timelineFrames is a session with one of everything show tells apart.
func timelineFrames() []frame.Frame {
	code := 0
	raw := func(seq uint64, at int64, d frame.Dir, s string) frame.Frame {
		return frame.Frame{Seq: seq, At: at, Dir: d, Raw: []byte(s)}
	}
	fs := []frame.Frame{
		raw(1, 0, frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"hello","name":"Hello","version":"0.1.0"}}}`),
		raw(2, 412000, frame.Out, `{"jsonrpc":"2.0","id":1,"result":{"sdkVersion":"1"}}`),
		raw(3, 500000, frame.Out, `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{"type":"text","text":"hi"}}}`),
		raw(4, 700000, frame.In, `{"jsonrpc":"2.0","id":1,"result":null}`),
		raw(5, 800000, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"\u001b[31mred","kind":"info"}}`),
		raw(6, 900000, frame.Err, "log \x1b[2J\x07 evil \u202e\xff"),
		raw(7, 1000000, frame.Out, "not json\r"),
		raw(8, 1100000, frame.Out, ""),
		raw(9, 1200000, frame.In, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`),
		raw(10, 3200000, frame.Out, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"unknown method tools/call"}}`),
		{Seq: 11, At: 4000000, Dir: frame.In, Event: frame.EventEOF},
		{Seq: 12, At: 5000000, Dir: frame.Out, Raw: []byte("last words"), NoEOL: true},
		frame.Frame{Seq: 13, At: 6000000, Event: frame.EventExit}.WithEnd("", &code),
	}
	return fs
}

func timelineStore(t testing.TB) string {
	dir := t.TempDir()
	putSessions(t, dir, 1, func(int) (frame.Session, []frame.Frame) {
		meta, _ := fakeSession("timeline", "hello", time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC))
		return meta, timelineFrames()
	})
	return dir
}

func TestShowTimeline(t *testing.T) {
	t.Parallel()
	dir := timelineStore(t)
	r := tapedeck(t, dir, nil, []string{"COLUMNS=200"}, "show", "timeline")
	if r.code != 0 {
		t.Fatalf("show: exit %d: %s", r.code, r.stderr)
	}
	out := string(r.stdout)
	if bytes.ContainsAny(r.stdout, "\x1b\x07\r") || strings.Contains(out, "\u202e") || bytes.Contains(r.stdout, []byte{0xff}) {
		t.Errorf("show let control characters through:\n%q", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2+13 {
		t.Fatalf("show printed %d lines, want a header, a column header and 13 frames:\n%s", len(lines), out)
	}
	if !strings.HasPrefix(lines[0], "session ") || !strings.Contains(lines[0], "timeline") || !strings.Contains(lines[0], "hello@0.1.0") {
		t.Errorf("header = %q", lines[0])
	}
	want := []string{
		"1 0.000000s → request initialize 1 {\"apiVersion\":1,\"plugin\":{\"id\":\"hello\",\"name\":\"Hello\",\"version\":\"0.1.0\"}}",
		"2 0.000412s ← response initialize 1 412µs {\"sdkVersion\":\"1\"}",
		"3 0.000500s ← request ui/setPanel 1 {\"tree\":{\"type\":\"text\",\"text\":\"hi\"}}",
		"4 0.000700s → response ui/setPanel 1 200µs null",
		"5 0.000800s ← notification ui/notify {\"message\":\"\\u001b[31mred\",\"kind\":\"info\"}",
		"6 0.000900s ! stderr log \\x1b[2J\\x07 evil \\u202e\\xff",
		"7 0.001000s ← stray not JSON: not json\\r",
		"8 0.001100s ← blank (blank line)",
		"9 0.001200s → request tools/call 2 {\"name\":\"x\"}",
		"10 0.003200s ← error tools/call 2 2ms error -32601: unknown method tools/call",
		"11 0.004000s • eof the host closed the plugin's stdin",
		"12 0.005000s ← stray not JSON: last words [no newline at the end]",
		"13 0.006000s • exit the plugin exited with code 0",
	}
	for i, w := range want {
		if got := strings.Join(strings.Fields(lines[i+2]), " "); got != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, got, w)
		}
	}
}

func TestShowFilters(t *testing.T) {
	t.Parallel()
	dir := timelineStore(t)
	seqs := func(args ...string) string {
		t.Helper()
		r := tapedeck(t, dir, nil, nil, append([]string{"show", "last", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("show %v: exit %d: %s", args, r.code, r.stderr)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(r.stdout)), "\n") {
			if l == "" {
				continue
			}
			var o struct{ Seq uint64 }
			if err := json.Unmarshal([]byte(l), &o); err != nil {
				t.Fatalf("show --json line %q: %v", l, err)
			}
			got = append(got, fmt.Sprint(o.Seq))
		}
		return strings.Join(got, ",")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "1,2,3,4,5,6,7,8,9,10,11,12,13"},
		{[]string{"--dir", "in"}, "1,4,9"},
		{[]string{"--dir", "err,event"}, "6,11,13"},
		{[]string{"--dir", "in", "--dir", "event"}, "1,4,9,11,13"},
		{[]string{"--method", "ui/*"}, "3,4,5"},
		{[]string{"--method", "initialize"}, "1,2"},
		{[]string{"--method", "*"}, "1,2,3,4,5,9,10"},
		{[]string{"--kind", "response,error"}, "2,4,10"},
		{[]string{"--kind", "stray", "--dir", "out"}, "7,12"},
		{[]string{"--kind", "request", "--method", "tools/*", "--dir", "out"}, ""},
	} {
		if got := seqs(tt.args...); got != tt.want {
			t.Errorf("show %v: frames %s, want %s", tt.args, got, tt.want)
		}
	}

	// --json carries the pairing and the bytes.
	r := tapedeck(t, dir, nil, nil, "show", "last", "--json", "--kind", "error")
	var o map[string]any
	if err := json.Unmarshal(r.stdout, &o); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if o["request"] != 9.0 || o["latency"] != 2000000.0 || o["method"] != "tools/call" || o["id"] != 2.0 || o["dir"] != "out" {
		t.Errorf("error response as JSON: %v", o)
	}
	r = tapedeck(t, dir, nil, nil, "show", "last", "--json", "--dir", "err")
	if want := `{"seq":6,"at":900000,"dir":"err","kind":"stderr","b64":"` + "bG9nIBtbMkoHIGV2aWwg4oCu/w==" + `"}` + "\n"; string(r.stdout) != want {
		t.Errorf("stderr as JSON:\n got %s\nwant %s", r.stdout, want)
	}
}

func TestShowRawReproducesWhatWasWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := []byte("{\"a\":1}\r\n\n\x00\xff\x1b[31m\n{\"b\":2}\nno newline")
	if r := recordFixture(t, dir, "tee", input); r.code != 0 {
		t.Fatalf("record: %d %s", r.code, r.stderr)
	}
	for _, d := range []string{"out", "in", "err"} {
		r := tapedeck(t, dir, nil, nil, "show", "--raw", "--dir", d, "last")
		if r.code != 0 || !bytes.Equal(r.stdout, input) {
			t.Errorf("show --raw --dir %s: exit %d, %q; want %q", d, r.code, r.stdout, input)
		}
	}
	r := tapedeck(t, dir, nil, nil, "show", "--raw", "--json", "last")
	if r.code != 2 {
		t.Errorf("--raw --json: exit %d, want 2", r.code)
	}
}

func TestShowColour(t *testing.T) {
	t.Parallel()
	dir := timelineStore(t)
	for _, tt := range []struct {
		env    []string
		colour bool
	}{
		{nil, true},
		{[]string{"NO_COLOR=1"}, false},
		// no-color.org: NO_COLOR set to the empty string is ignored.
		{[]string{"NO_COLOR="}, true},
	} {
		got := onTerminal(t, 200, tt.env, "--store", dir, "show", "last")
		if has := strings.Contains(got, "\x1b["); has != tt.colour {
			t.Errorf("env %v: colour %v, want %v:\n%q", tt.env, has, tt.colour, got)
		}
		// The frames' own escapes never reach the terminal, colour or not.
		if strings.Contains(got, "\x1b[2J") || strings.Contains(got, "\x07") {
			t.Errorf("env %v: a frame's escape reached the terminal:\n%q", tt.env, got)
		}
	}
}

// onTerminal runs tapedeck with its stdout and stderr on a pseudo-terminal
// of cols columns and returns what it wrote there.
func onTerminal(t *testing.T, cols int, env []string, args ...string) string {
	t.Helper()
	m, s, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := setPTYSize(m, 40, cols); err != nil {
		t.Skipf("cannot size the pseudo-terminal: %v", err)
	}
	cmd := exec.Command(tapedeckBin, args...)
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "COLUMNS"), "NO_COLOR"), "TERM=xterm")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = s, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, m); close(copied) }() // ends with EIO once the child is gone
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v on a terminal: %v\n%s", args, err, out.Bytes())
	}
	<-copied
	m.Close()
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}

// TestShowAndLsFitTheTerminal: the width comes from the terminal itself
// (before $COLUMNS), and long summaries, names and plugin labels are cut
// to fit it, counted in display cells (a CJK character takes two).
func TestShowAndLsFitTheTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("名前", 30)
	putSessions(t, dir, 1, func(int) (frame.Session, []frame.Frame) {
		return fakeSession("long "+long, "plugin-"+long, time.Now())
	})
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	for _, args := range [][]string{{"show", "last"}, {"ls"}} {
		out := onTerminal(t, 140, []string{"COLUMNS=400", "NO_COLOR=1"}, append([]string{"--store", dir}, args...)...)
		cut := false
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			line = ansi.ReplaceAllString(line, "")
			if strings.HasPrefix(line, "session ") {
				continue // show's header says what it is, whole
			}
			if w := screen.StringWidth(line); w > 140 {
				t.Errorf("%v on 140 columns: a line of %d cells: %q", args, w, line)
			}
			cut = cut || strings.Contains(line, "…")
		}
		if !cut {
			t.Errorf("%v on 140 columns: nothing was cut:\n%s", args, out)
		}
	}
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func TestShowFollowsALiveSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startShim(t, dir, "echo")
	io.WriteString(s.stdin, `{"jsonrpc":"2.0","method":"one"}`+"\n")
	s.readLine(t)

	show := exec.Command(tapedeckBin, "--store", dir, "show", "-f", "--dir", "out,event", "last")
	pipe, err := show.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	show.Stderr = &stderr
	if err := show.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { show.Process.Kill(); show.Wait() })
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		br := bufio.NewReader(pipe)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.Join(strings.Fields(l), " ")
		}
	}()
	expect := func(what string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("show -f ended before %q (stderr %s)", what, stderr.String())
				}
				if strings.Contains(l, what) {
					return
				}
			case <-deadline:
				t.Fatalf("show -f did not print %q within 10 s", what)
			}
		}
	}
	expect("notification one")
	io.WriteString(s.stdin, `{"jsonrpc":"2.0","method":"two"}`+"\n")
	s.readLine(t)
	expect("notification two")
	s.stdin.Close()
	if code := s.wait(t); code != 0 {
		t.Fatalf("shim exit %d", code)
	}
	expect("exit the plugin exited with code 0")
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- show.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("show -f: %v (stderr %s)", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("show -f did not stop when the session ended")
	}

	// On a finished session, -f prints everything and returns.
	r := tapedeck(t, dir, nil, nil, "show", "-f", "--raw", "--dir", "in", "last")
	if r.code != 0 || string(r.stdout) != `{"jsonrpc":"2.0","method":"one"}`+"\n"+`{"jsonrpc":"2.0","method":"two"}`+"\n" {
		t.Errorf("show -f on a finished session: %d %q", r.code, r.stdout)
	}
}

// TestSessionReferences checks every command that names a session against
// every kind of reference, and the errors for bad ones.
func TestSessionReferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	putSessions(t, dir, 3, func(i int) (frame.Session, []frame.Frame) {
		meta, frames := fakeSession([]string{"twin", "twin", "solo"}[i], "p", base.Add(time.Duration(i)*time.Second))
		// Ids that share a prefix: the same start time prefix, then a letter.
		meta.ID = "01aaaaaaaa" + strings.Repeat(string("xyz"[i]), 16)
		ids = append(ids, meta.ID)
		return meta, frames
	})
	for _, cmd := range [][]string{{"show", "--raw"}, {"export"}} {
		for _, ok := range []struct{ ref, id string }{
			{"last", ids[2]}, {"solo", ids[2]}, {ids[0], ids[0]}, {"01aaaaaaaay", ids[1]}, {"01AAAAAAAAY", ids[1]},
		} {
			r := tapedeck(t, dir, nil, nil, append(cmd, ok.ref)...)
			if r.code != 0 {
				t.Errorf("%v %s: exit %d: %s", cmd, ok.ref, r.code, r.stderr)
			}
			if cmd[0] == "export" && !bytes.Contains(r.stdout, []byte(ok.id)) {
				t.Errorf("export %s did not export %s", ok.ref, ok.id)
			}
		}
		for _, bad := range []struct{ ref, want string }{
			{"01aaaaaaaa", `ambiguous session reference: "01aaaaaaaa" matches 3 sessions: ` + ids[2] + " (solo)"},
			{"twin", `ambiguous session reference: "twin" matches 2 sessions`},
			{"nope", `no such session: "nope" (see tapedeck ls)`},
		} {
			r := tapedeck(t, dir, nil, nil, append(cmd, bad.ref)...)
			lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
			if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], bad.want) {
				t.Errorf("%v %s: exit %d, stderr %q; want 1 and one line with %q", cmd, bad.ref, r.code, r.stderr, bad.want)
			}
			if strings.Contains(bad.want, "ambiguous") && (!strings.Contains(lines[0], ids[0]) || !strings.Contains(lines[0], ids[1])) {
				t.Errorf("%v %s: the candidates are not listed: %s", cmd, bad.ref, lines[0])
			}
		}
	}
	for _, args := range [][]string{{"show"}, {"show", "a", "b"}, {"export"}, {"show", "--dir", "up", "last"}, {"show", "--kind", "x", "last"}, {"show", "--method", "[", "last"}} {
		if r := tapedeck(t, dir, nil, nil, args...); r.code != 2 || bytes.Count(r.stderr, []byte("\n")) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, r.code, r.stderr)
		}
	}
	if r := tapedeck(t, t.TempDir(), nil, nil, "show", "last"); r.code != 1 || !strings.Contains(string(r.stderr), "the store has no sessions yet") {
		t.Errorf("show last on an empty store: %d %s", r.code, r.stderr)
	}
}

// bigSession stores one session of n frames of about 120 bytes (requests
// and their responses, alternating) and returns the store.
func bigSession(b testing.TB, n int) string {
	dir := b.TempDir()
	st, err := store.Open(dir, &store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	meta, _ := fakeSession("big", "bench", time.Now())
	var f frame.Frame
	var buf []byte
	i := 0
	err = st.Put(meta, func() (*frame.Frame, error) {
		if i == n {
			return nil, io.EOF
		}
		i++
		if i%2 == 1 {
			buf = fmt.Appendf(buf[:0], `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"q":"item %d"}}}`, i, i)
			f = frame.Frame{Seq: uint64(i), At: int64(i) * 1000, Dir: frame.In, Raw: buf}
		} else {
			buf = fmt.Appendf(buf[:0], `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"found %d"}]}}`, i-1, i)
			f = frame.Frame{Seq: uint64(i), At: int64(i) * 1000, Dir: frame.Out, Raw: buf}
		}
		return &f, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// showRun runs show on the store and reports the time to the first line
// and the peak resident memory of the whole run.
func showRun(b testing.TB, dir string) (first time.Duration, total time.Duration, maxRSS int64) {
	// The peak memory of the command itself, through peakrss (the rusage
	// of a child of this process would start from this process's peak).
	peak := filepath.Join(b.TempDir(), "peak")
	cmd := exec.Command(peakRSSProgram(b), peak, tapedeckBin, "--store", dir, "show", "last")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReaderSize(pipe, 1<<20)
	if _, err := br.ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	first = time.Since(start)
	io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	total = time.Since(start)
	return first, total, readPeakKiB(b, peak) * 1024
}

// BenchmarkShow prints sessions of 100,000 and 1,000,000 frames with the
// real binary: first-line-ms is the time until the first line (goal: under
// 100 ms), maxrss-MB the peak memory of the whole run (goal: the same for
// both sizes).
func BenchmarkShow(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		start := time.Now()
		dir := bigSession(b, n)
		b.Logf("stored %d frames in %v", n, time.Since(start))
		b.Run(fmt.Sprintf("frames=%d", n), func(b *testing.B) {
			var first, total time.Duration
			var rss int64
			for b.Loop() {
				f, t, r := showRun(b, dir)
				first, total, rss = max(first, f), max(total, t), max(rss, r)
			}
			b.ReportMetric(float64(first.Microseconds())/1000, "first-line-ms")
			b.ReportMetric(float64(total.Milliseconds()), "total-ms")
			b.ReportMetric(float64(rss)/(1<<20), "maxrss-MB")
		})
	}
}
