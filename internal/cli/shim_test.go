package cli

// A shim started by a test that talks to it line by line while it runs.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// liveShim is a running `tapedeck record` with pipes on all three streams.
type liveShim struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	outR   io.ReadCloser
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startShim(t *testing.T, store, mode string, env ...string) *liveShim {
	t.Helper()
	argv, fenv := fixture(mode, env...)
	cmd := exec.Command(tapedeckBin, append([]string{"--store", store, "record"}, argv...)...)
	cmd.Env = append(os.Environ(), fenv...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &liveShim{cmd: cmd, stdin: stdin, outR: outR, stdout: bufio.NewReader(outR), stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return s
}

func (s *liveShim) readLine(t *testing.T) string {
	t.Helper()
	line, err := s.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("read shim stdout: %v (stderr: %s)", err, s.stderr.String())
	}
	return strings.TrimSuffix(line, "\n")
}

// wait waits for the shim and returns its exit code.
func (s *liveShim) wait(t *testing.T) int {
	t.Helper()
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("wait for shim: %v", err)
	}
	return 0
}

// gone reports whether pid no longer runs (a zombie counts as gone).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
