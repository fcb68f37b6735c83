package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type lockedSink struct {
	mu sync.Mutex
	collectSink
}

func (s *lockedSink) Line(l *Line) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collectSink.Line(l)
}

func (s *lockedSink) Event(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collectSink.Event(e)
}

func TestRunRelaysAndReportsLifecycle(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat on PATH")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	in := []byte("{\"a\":1}\n{\"b\":2}\nlast")
	go func() { w.Write(in); w.Close() }()
	var out, errb bytes.Buffer
	sink := &lockedSink{}
	res, err := Run(context.Background(), Config{
		Command: []string{"cat"},
		Stdin:   r,
		Stdout:  &out,
		Stderr:  &errb,
		Sink:    sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != 0 || !bytes.Equal(out.Bytes(), in) {
		t.Fatalf("code %d, out %q", res.Code, out.Bytes())
	}
	var kinds []EventKind
	for _, e := range sink.events {
		kinds = append(kinds, e.Kind)
	}
	want := []EventKind{EventEOF, EventClosed, EventExit}
	if len(kinds) != 3 || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] {
		t.Errorf("events %v, want %v", kinds, want)
	}
	// Each line is seen twice: going in and coming out.
	if len(sink.lines) != 6 {
		t.Errorf("%d lines, want 6", len(sink.lines))
	}
}

func TestRunCannotStart(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/noexec", []byte("#!/bin/sh\n"), 0o644)
	cases := []struct {
		cmd  string
		want error
	}{
		{dir + "/missing", ErrNotFound},
		{"tapedeck-surely-not-on-path", ErrNotFound},
		{dir + "/noexec", ErrNotExecutable},
	}
	for _, c := range cases {
		_, err := Run(context.Background(), Config{Command: []string{c.cmd}})
		if !errors.Is(err, c.want) {
			t.Errorf("Run(%s) = %v, want %v", c.cmd, err, c.want)
		}
	}
}

// TestRunEndsWhileHostKeepsStdinOpen: the host's stdin is a blocking pipe
// that stays open after the plugin exits. Run returns without waiting for
// the read it cannot interrupt, and what the host writes afterwards never
// reaches the sink: the reader left behind is fenced off and ends at its
// next read.
func TestRunEndsWhileHostKeepsStdinOpen(t *testing.T) {
	if _, err := exec.LookPath("true"); err != nil {
		t.Skip("no true on PATH")
	}
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil { // blocking, unlike os.Pipe
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "host-stdin"), os.NewFile(uintptr(fds[1]), "host-stdin-w")
	defer r.Close()
	if err := r.SetReadDeadline(time.Now()); err == nil {
		t.Fatal("the pipe supports deadlines: the test would not test the blocking read")
	}
	base := runtime.NumGoroutine()
	sink := &afterSink{}
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Command: []string{"true"}, Stdin: r, Stdout: &out, Stderr: &out, Sink: sink})
	if err != nil || res.Code != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	sink.mu.Lock()
	sink.over = true
	sink.mu.Unlock()
	w.Write([]byte("{\"late\":true}\n"))
	w.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before Run: the stdin reader did not end at its read", runtime.NumGoroutine(), base)
		}
		runtime.Gosched()
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.late) > 0 {
		t.Fatalf("the sink got %d calls after Run returned: %v", len(sink.late), sink.late)
	}
}

// afterSink records calls that come after over is set.
type afterSink struct {
	mu   sync.Mutex
	over bool
	late []string
}

func (s *afterSink) Line(l *Line) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		s.late = append(s.late, "line "+string(l.Bytes))
	}
}

func (s *afterSink) Event(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		s.late = append(s.late, fmt.Sprintf("event %d", e.Kind))
	}
}

// TestRunGroupEndsWhatTheChildLeaves: with Group, a process the child
// leaves running in a session of its own (setsid) is gone once Run has
// returned, and Started was told the child's pid; without it, it lives
// on (its host's to end).
func TestRunGroupEndsWhatTheChildLeaves(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid(1)")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	for _, group := range []bool{true, false} {
		pidfile := filepath.Join(t.TempDir(), "pid")
		var started int
		_, err := Run(context.Background(), Config{
			Command: []string{"sh", "-c", `setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! >"$0"; echo $$ >>"$0"`, pidfile},
			Group:   group,
			Started: func(pid int) { started = pid },
		})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(pidfile)
		f := strings.Fields(string(b))
		if len(f) != 2 {
			t.Fatalf("the shell wrote %q", b)
		}
		left, _ := strconv.Atoi(f[0])
		t.Cleanup(func() { syscall.Kill(left, syscall.SIGKILL) })
		if self, _ := strconv.Atoi(f[1]); self != started {
			t.Errorf("Group %v: Started was told pid %d, the child is %d", group, started, self)
		}
		stat, err := os.ReadFile("/proc/" + f[0] + "/stat")
		if gone := err != nil; gone != group {
			t.Errorf("Group %v: the setsid child is gone: %v, want %v (%s)", group, gone, group, stat)
		}
	}
}
