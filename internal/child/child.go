// Package child owns starting a child process whose parent-death signal
// (Linux's Pdeathsig) stays true. Linux sends that signal when the thread
// that forked the child ends, not the process, and the Go runtime ends a
// thread whenever a goroutine locked to it returns (any code may do that;
// Start does when a wait fails), so a child forked from an ordinary
// goroutine can be killed at random while its parent lives on. Start forks from a goroutine locked to its
// thread for exactly the child's life. Pipes makes the pipes of a child's
// standard streams: the parent's ends on the runtime's poller, the
// child's plain blocking files.
package child

import (
	"os"
	"os/exec"
	"runtime"
)

// Start starts cmd from a goroutine locked to its OS thread and waits for
// it there; the channel yields the child's state once it has exited (a
// zero state when waiting failed). The goroutine ends when the child has
// been waited for, so the channel must be received from, or the child must
// end, for it to go. Once the child is reaped the thread is handed back to
// the runtime for the next goroutine, rather than ended: a replay
// --runs that started a thread for every plugin and ended it spent 6 % of
// its own CPU doing so. When waiting fails the thread ends with the
// goroutine, as the parent-death signal of a child that might live on
// wants.
func Start(cmd *exec.Cmd) (*os.Process, <-chan *os.ProcessState, error) {
	started := make(chan error, 1)
	exited := make(chan *os.ProcessState, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			runtime.UnlockOSThread() // nothing forked from it lives
			started <- err
			return
		}
		started <- nil
		state, err := cmd.Process.Wait()
		if err != nil && state == nil {
			state = &os.ProcessState{}
		} else {
			// Reaped: nothing forked from this thread lives on.
			runtime.UnlockOSThread()
		}
		exited <- state
	}()
	if err := <-started; err != nil {
		return nil, nil, err
	}
	return cmd.Process, exited, nil
}
