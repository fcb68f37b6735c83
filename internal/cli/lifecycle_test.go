package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

func TestExitStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, mode string
		env        []string
		code       int
		exit       string
	}{
		{"code 0", "exit", []string{"FIXTURE_CODE=0"}, 0, "exit:0"},
		{"code 3", "exit", []string{"FIXTURE_CODE=3"}, 3, "exit:3"},
		{"segfault", "segv", nil, 128 + 11, "exit:SIGSEGV"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := t.TempDir()
			r := recordFixture(t, store, c.mode, []byte("{}\n"), c.env...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d (stderr %s)", r.code, c.code, r.stderr)
			}
			_, frames := exported(t, store, "last")
			ev := events(frames)
			if len(ev) == 0 || ev[len(ev)-1] != c.exit {
				t.Errorf("events %v, want last %s", ev, c.exit)
			}
		})
	}
}

func TestCommandCannotStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := dir + "/plugin.sh"
	os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644)
	cases := []struct {
		name, cmd string
		code      int
	}{
		{"missing path", dir + "/nope", 127},
		{"not on PATH", "tapedeck-no-such-plugin", 127},
		{"not executable", notExec, 126},
		{"a folder", dir, 126},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := t.TempDir()
			r := tapedeck(t, store, []byte("{}\n"), nil, "record", "--", c.cmd)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", r.code, c.code, r.stderr)
			}
			if len(r.stdout) != 0 {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], c.cmd) {
				t.Errorf("stderr %q, want one line naming %s", r.stderr, c.cmd)
			}
			list := lsJSON(t, store)
			if len(list) != 1 || list[0].Status != frame.StatusFailedToStart {
				t.Errorf("sessions %+v, want one failed-to-start", list)
			}
		})
	}
}

func TestSignalsReachThePlugin(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startShim(t, store, "signals")
	if got := s.readLine(t); got != "ready" {
		t.Fatalf("first line %q", got)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		s.cmd.Process.Signal(sig)
		if got, want := s.readLine(t), fmt.Sprintf("got %d", sig); got != want {
			t.Fatalf("plugin said %q, want %q", got, want)
		}
	}
	s.stdin.Close()
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, s.stderr.String())
	}
	_, frames := exported(t, store, "last")
	want := "signal:SIGTERM signal:SIGINT signal:SIGHUP eof closed exit:0"
	if got := strings.Join(events(frames), " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestKilledShimTakesThePluginWithIt(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startShim(t, store, "stubborn")
	pid, err := strconv.Atoi(s.readLine(t))
	if err != nil {
		t.Fatal(err)
	}
	s.readLine(t) // ready
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.stdin.Close()
	if gone(pid) {
		t.Fatal("the stubborn plugin died of SIGTERM or EOF; the test proves nothing")
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	waitFor(t, "the orphaned plugin to die", time.Second, func() bool { return gone(pid) })
	list := lsJSON(t, store)
	if len(list) != 1 || list[0].Status != frame.StatusInterrupted {
		t.Fatalf("sessions %+v, want one interrupted", list)
	}
}

func TestPluginClosesStdoutAndLivesOn(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startShim(t, store, "closeout")
	if got := s.readLine(t); !strings.Contains(got, "bye") {
		t.Fatalf("first line %q", got)
	}
	if _, err := s.stdout.ReadByte(); err != io.EOF {
		t.Fatalf("stdout not closed after the plugin closed it: %v", err)
	}
	io.WriteString(s.stdin, "{\"after\":1}\n")
	s.stdin.Close()
	if code := s.wait(t); code != 7 {
		t.Fatalf("exit %d, want 7", code)
	}
	_, frames := exported(t, store, "last")
	if got := strings.Join(events(frames), " "); got != "closed eof exit:7" {
		t.Errorf("events %q, want closed eof exit:7", got)
	}
	if got := string(stream(frames, frame.In)); got != "{\"after\":1}\n" {
		t.Errorf("stdin frames %q", got)
	}
}

func TestGrandchildKeepsStdoutOpen(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startShim(t, store, "grandchild")
	defer func() {
		if _, pid, ok := strings.Cut(s.stderr.String(), "grandchild "); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(pid, "\n", 2)[0])); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
	}()
	if got := s.readLine(t); !strings.Contains(got, "last") {
		t.Fatalf("line %q", got)
	}
	if code := s.wait(t); code != 5 {
		t.Fatalf("exit %d, want 5", code)
	}
	_, frames := exported(t, store, "last")
	ev := events(frames)
	if len(ev) == 0 || ev[len(ev)-1] != "exit:5" {
		t.Errorf("events %v", ev)
	}
}

func TestPluginExitsWhileHostKeepsWriting(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startShim(t, store, "early")
	io.WriteString(s.stdin, "{\"first\":1}\n")
	if got := s.readLine(t); got != `{"first":1}` {
		t.Fatalf("echo %q", got)
	}
	// Keep writing (and never close stdin) until the shim is gone.
	stop := make(chan struct{})
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := io.WriteString(s.stdin, "{\"more\":1}\n"); err != nil {
				return
			}
		}
	}()
	code := s.wait(t)
	close(stop)
	writer.Wait()
	if code != 4 {
		t.Fatalf("exit %d, want 4", code)
	}
}

func TestHostClosesStdout(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startShim(t, store, "echo")
	io.WriteString(s.stdin, "{\"n\":1}\n")
	s.readLine(t)
	s.outR.Close() // the host stops reading: our next write gets EPIPE
	var want bytes.Buffer
	want.WriteString("{\"n\":1}\n")
	for i := 2; i <= 200; i++ {
		line := fmt.Sprintf("{\"n\":%d}\n", i)
		want.WriteString(line)
		io.WriteString(s.stdin, line)
	}
	s.stdin.Close()
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit %d, want 0 (stderr %s)", code, s.stderr.String())
	}
	_, frames := exported(t, store, "last")
	if got := stream(frames, frame.Out); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("stdout frames: %d bytes, want %d", len(got), want.Len())
	}
	if !strings.Contains(strings.Join(events(frames), " "), "gone") {
		t.Errorf("events %v lack gone", events(frames))
	}
}
