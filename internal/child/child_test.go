package child

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// TestParentDeathSignalHoldsWhileThreadsEnd: a child started with a
// parent-death signal lives on while goroutines locked to their threads
// end (each ending takes its thread with it, as the relay's do), and its
// state arrives once it is killed.
func TestParentDeathSignalHoldsWhileThreadsEnd(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	proc, exited, err := Start(cmd)
	if err != nil {
		t.Skipf("no sleep to start: %v", err)
	}
	for range 4 {
		var wg sync.WaitGroup
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread() // never unlocked: the thread ends here
			}()
		}
		wg.Wait()
	}
	select {
	case state := <-exited:
		t.Fatalf("the child ended while only threads of its parent did: %v", state)
	default:
	}
	if err := proc.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the child is gone: %v", err)
	}
	proc.Kill()
	if state := <-exited; state == nil || state.Success() {
		t.Errorf("state after the kill: %v", state)
	}
}

// TestAThreadServesChildrenOneAfterAnother: children started and waited
// for one after another are forked from threads the runtime keeps, not
// from a new thread each (a replay --runs spent 6 % of its own CPU making
// and ending them). Every thread the process ever had shows in
// /proc/self/task while it lives; a thread made for each child would show
// a new id each time.
func TestAThreadServesChildrenOneAfterAnother(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc/self/task: Linux only")
	}
	if _, err := exec.LookPath("true"); err != nil {
		t.Skipf("no true to start: %v", err)
	}
	const children = 40
	seen := map[string]bool{}
	for range children {
		cmd := exec.Command("true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		_, exited, err := Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tasks {
			seen[e.Name()] = true
		}
		if state := <-exited; !state.Success() {
			t.Fatalf("true ended %v", state)
		}
	}
	if len(seen) > children/2 {
		t.Errorf("%d children one after another ran on %d threads, want the few the runtime keeps", children, len(seen))
	}
}
