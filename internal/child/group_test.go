package child

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEndGroupEndsWhatLeftTheGroup: a child started with NewGroup that
// leaves a process in its group and one in a session of its own
// (setsid), then exits: EndGroup kills and reaps both.
func TestEndGroupEndsWhatLeftTheGroup(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid(1)")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	pidfile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command("sh", "-c", `sleep 600 </dev/null >/dev/null 2>&1 & echo $! >"$0"; setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! >>"$0"`, pidfile)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	NewGroup(cmd.SysProcAttr)
	started := time.Now()
	proc, exited, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	<-exited
	out, _ := os.ReadFile(pidfile)
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the shell wrote %q", out)
		}
		pids = append(pids, pid)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	if len(pids) != 2 {
		t.Fatalf("the shell wrote %q, want two pids", out)
	}
	if survivors := EndGroup(proc.Pid, started); len(survivors) > 0 {
		t.Errorf("EndGroup: survivors %v", survivors)
	}
	for i, what := range []string{"in the group", "in a session of its own"} {
		// Reaped, not a zombie: no /proc entry at all (a setsid child's
		// parent, the shell, had exited, so it was ours to reap).
		if _, err := os.Stat("/proc/" + strconv.Itoa(pids[i]) + "/stat"); err == nil {
			stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pids[i]) + "/stat")
			t.Errorf("the child's process %s (%d) is still there: %s", what, pids[i], stat)
		}
	}
}

// TestWritingSeesAGrandchildsFile: a file under the folder that a
// grandchild of the child holds open for writing is listed, once though
// the grandchild's own child holds it too (a shell's child inherits its
// descriptors: the file was listed twice while touch ran); one it holds
// open for reading only is not, nor one outside the folder.
func TestWritingSeesAGrandchildsFile(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	inside := filepath.Join(dir, "log.txt")
	script := filepath.Join(dir, "read.txt")
	os.WriteFile(script, []byte("x"), 0o644)
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command("sh", "-c", `sh -c 'exec 3>>"$0" 4>/dev/null 5<"$2"; sleep 600 & touch "$1"; exec sleep 600' "$0" "$1" "$2" & wait`, inside, ready, script)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	NewGroup(cmd.SysProcAttr)
	started := time.Now()
	proc, _, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { EndGroup(proc.Pid, started) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the grandchild did not start")
		}
		time.Sleep(10 * time.Millisecond) // polling a file's existence, with a deadline
	}
	got := Writing(proc.Pid, dir)
	if len(got) != 1 || got[0] != inside {
		t.Errorf("Writing(%d, %s) = %q, want [%s]", proc.Pid, dir, got, inside)
	}
}
