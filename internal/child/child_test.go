package child

import (
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
