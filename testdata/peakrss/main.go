// Command peakrss runs a command and writes the command's peak resident
// memory, in KiB, to a file; it exits as the command did. The memory tests
// run the tapedeck binary through it.
//
// A test cannot read the peak of a child it starts itself: os/exec starts
// a child in the parent's memory (vfork), and at exec Linux carries the
// high-water mark of that memory over into the child's ru_maxrss, so the
// child's peak reads as at least the test process's own, which grows as
// the tests run. This program is small: the high-water mark it passes on
// is a few MiB, below any command's own.
//
//	peakrss FILE COMMAND [ARG…]
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: peakrss FILE COMMAND [ARG…]")
		os.Exit(2)
	}
	// The command dies with this program (a test's deadline kills it):
	// the parent-death signal is the forking thread's, so the thread stays.
	runtime.LockOSThread()
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if err := os.WriteFile(os.Args[1], []byte(strconv.FormatInt(ru.Maxrss, 10)+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		// Die of the same signal, as exec "$@" did.
		signal.Reset(ws.Signal())
		syscall.Kill(os.Getpid(), ws.Signal())
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
