package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

func TestLsNewestFirstFiltersAndJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	plugins := []string{"weather", "todo", "weather"}
	names := []string{"first", "", "third"}
	putSessions(t, dir, 3, func(i int) (frame.Session, []frame.Frame) {
		return fakeSession(names[i], plugins[i], base.Add(time.Duration(i)*time.Hour))
	})

	r := tapedeck(t, dir, nil, nil, "ls")
	if r.code != 0 {
		t.Fatalf("ls: exit %d: %s", r.code, r.stderr)
	}
	rows := strings.Split(strings.TrimSpace(string(r.stdout)), "\n")
	if len(rows) != 4 || !strings.HasPrefix(rows[0], "ID ") {
		t.Fatalf("ls printed:\n%s", r.stdout)
	}
	for i, want := range []string{"third", "-", "first"} {
		f := strings.Fields(rows[i+1])
		if f[1] != want {
			t.Errorf("row %d name = %q, want %q (newest first)\n%s", i+1, f[1], want, r.stdout)
		}
	}
	f := strings.Fields(rows[1])
	local := base.Add(2 * time.Hour).Local().Format("2006-01-02 15:04:05")
	if got := strings.Join(f[2:11], " "); got != "weather@1.0.0 "+local+" 1.5s 1 1 1 complete 0" {
		t.Errorf("row 1 = %q, want plugin, local start, duration, counts, status, exit", got)
	}

	r = tapedeck(t, dir, nil, nil, "ls", "--plugin", "weather", "--limit", "1")
	if rows := strings.Split(strings.TrimSpace(string(r.stdout)), "\n"); len(rows) != 2 || !strings.Contains(rows[1], "third") {
		t.Errorf("ls --plugin weather --limit 1:\n%s", r.stdout)
	}

	r = tapedeck(t, dir, nil, nil, "ls", "--json", "--plugin", "weather")
	var list []map[string]any
	if err := json.Unmarshal(r.stdout, &list); err != nil || len(list) != 2 {
		t.Fatalf("ls --json: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"id", "name", "status", "started", "ended", "command", "plugin", "frames", "exit"} {
		if _, ok := list[0][k]; !ok {
			t.Errorf("ls --json object has no %q: %v", k, list[0])
		}
	}
	if list[0]["name"] != "third" || list[1]["name"] != "first" {
		t.Errorf("ls --json order: %v, %v", list[0]["name"], list[1]["name"])
	}
	frames := list[0]["frames"].(map[string]any)
	if frames["in"] != 1.0 || frames["out"] != 1.0 || frames["err"] != 1.0 {
		t.Errorf("frames = %v", frames)
	}

	if r := tapedeck(t, t.TempDir(), nil, nil, "ls", "--json"); r.code != 0 || string(r.stdout) != "[]\n" {
		t.Errorf("ls --json on an empty store: %d %q", r.code, r.stdout)
	}
}

func TestLsShowsLiveSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startShim(t, dir, "echo")
	for i := range 3 {
		fmt.Fprintf(s.stdin, `{"jsonrpc":"2.0","method":"tick","params":{"n":%d}}`+"\n", i)
		s.readLine(t)
	}
	var live frame.Session
	waitFor(t, "ls to show the live session with its counts", 10*time.Second, func() bool {
		list := lsJSON(t, dir)
		if len(list) == 1 {
			live = list[0]
		}
		return len(list) == 1 && live.Frames.In == 3 && live.Frames.Out == 3
	})
	if live.Status != frame.StatusRecording || live.Ended != nil {
		t.Errorf("live session: status %q, ended %v", live.Status, live.Ended)
	}
	r := tapedeck(t, dir, nil, nil, "ls")
	if !strings.Contains(string(r.stdout), "recording") {
		t.Errorf("ls does not say recording:\n%s", r.stdout)
	}
	s.stdin.Close()
	if code := s.wait(t); code != 0 {
		t.Fatalf("shim exit %d", code)
	}
	if list := lsJSON(t, dir); list[0].Status != frame.StatusComplete {
		t.Errorf("after the end: %s", list[0].Status)
	}
}

func TestLsEscapesWhatCouldDriveTheTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv, env := fixture("echo")
	name := "evil\x1b]0;owned\x07\x1b[31mred\u202e\xff"
	r := tapedeck(t, dir, []byte("{}\n"), env, append([]string{"record", "--name", name}, argv...)...)
	if r.code != 0 {
		t.Fatalf("record: %d %s", r.code, r.stderr)
	}
	r = tapedeck(t, dir, nil, nil, "ls")
	if bytes.ContainsAny(r.stdout, "\x1b\x07") || bytes.Contains(r.stdout, []byte("\u202e")) || bytes.Contains(r.stdout, []byte{0xff}) {
		t.Errorf("ls let control characters through:\n%q", r.stdout)
	}
	if !strings.Contains(string(r.stdout), `evil\x1b]0;owned\x07\x1b[31mred\u202e`) {
		t.Errorf("ls does not show the name escaped:\n%s", r.stdout)
	}
}

// BenchmarkLs lists a store of 10,000 sessions with the real binary: the
// table and --json. The goal is under 200 ms per listing.
func BenchmarkLs(b *testing.B) {
	dir := b.TempDir()
	base := time.Now().Add(-24 * time.Hour)
	start := time.Now()
	putSessions(b, dir, 10000, func(i int) (frame.Session, []frame.Frame) {
		return fakeSession(fmt.Sprintf("s%d", i), []string{"weather", "todo", "notes"}[i%3], base.Add(time.Duration(i)*time.Second))
	})
	b.Logf("stored 10,000 sessions in %v", time.Since(start))
	for _, args := range [][]string{{"ls"}, {"ls", "--json"}, {"ls", "--plugin", "todo", "--limit", "20"}} {
		b.Run(strings.Join(args, " "), func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(tapedeckBin, append([]string{"--store", dir}, args...)...)
				out, err := cmd.Output()
				if err != nil || len(out) == 0 {
					b.Fatalf("%v: %v", args, err)
				}
			}
		})
	}
}
