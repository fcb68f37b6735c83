package child

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPipesCarryAChildsStreams: a child started on the pipes reads what is
// written to In and writes to Out and Err; the parent's ends take
// deadlines (they are on the poller), and the child's ends block, as a
// child's standard streams should.
func TestPipesCarryAChildsStreams(t *testing.T) {
	s, err := Pipes()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if runtime.GOOS == "linux" {
		for name, f := range map[string]*os.File{"stdin": s.ChildIn, "stdout": s.ChildOut, "stderr": s.ChildErr} {
			flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
			if e != 0 {
				t.Fatalf("fcntl %s: %v", name, e)
			}
			if flags&syscall.O_NONBLOCK != 0 {
				t.Errorf("the child's %s is non-blocking", name)
			}
		}
	}
	if err := s.Out.SetReadDeadline(time.Now()); err != nil {
		t.Fatalf("the parent's end of stdout takes no deadline: %v", err)
	}
	if _, err := s.Out.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past the deadline: %v, want a deadline error", err)
	}
	s.Out.SetReadDeadline(time.Time{})

	cmd := exec.Command("sh", "-c", "read line; echo \"out $line\"; echo \"err $line\" >&2")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.ChildIn, s.ChildOut, s.ChildErr
	proc, exited, err := Start(cmd)
	if err != nil {
		t.Skipf("no sh to start: %v", err)
	}
	s.CloseChild()
	if _, err := s.In.WriteString("hello\n"); err != nil {
		t.Fatal(err)
	}
	s.In.Close()
	out, err := io.ReadAll(s.Out)
	if err != nil {
		t.Fatal(err)
	}
	errOut, err := io.ReadAll(s.Err)
	if err != nil {
		t.Fatal(err)
	}
	if state := <-exited; !state.Success() {
		t.Errorf("sh (pid %d) ended %v", proc.Pid, state)
	}
	if got := strings.TrimSpace(string(out)); got != "out hello" {
		t.Errorf("stdout %q, want %q", got, "out hello")
	}
	if got := strings.TrimSpace(string(errOut)); got != "err hello" {
		t.Errorf("stderr %q, want %q", got, "err hello")
	}
}
