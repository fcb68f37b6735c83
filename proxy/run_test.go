package proxy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"
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
