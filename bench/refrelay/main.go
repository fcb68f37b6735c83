// Command refrelay is the reference relay of the relay benchmark: the least
// a Go shim can do. It starts its arguments as a child and copies the three
// streams with io.Copy (stdin read with plain blocking reads, the child's
// pipes on the runtime's poller, as os/exec makes them), records nothing,
// and exits with the child's code. tapedeck record is measured against it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: refrelay COMMAND [ARGS…]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	go func() {
		// Left in its read when the child ends first, like any shim whose
		// host keeps stdin open; the process exit ends it.
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	io.Copy(os.Stdout, out)
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "refrelay:", err)
	os.Exit(1)
}
