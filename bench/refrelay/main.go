// Command refrelay is the reference relay of the relay benchmark: the least
// a Go shim can do. It starts its arguments as a child and copies the three
// streams with io.Copy (stdin read with plain blocking reads, the child's
// pipes on the runtime's poller, as os/exec makes them), records nothing,
// and exits with the child's code. tapedeck record is measured against it.
//
// With -record FILE it also appends every byte of stdin and stdout to FILE
// before passing it on (io.MultiWriter, the file first): the least a shim
// that records can do, no framing, no checksum, no lines.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	record := flag.String("record", "", "append every byte relayed (both ways) to this file before passing it on")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: refrelay [-record FILE] COMMAND [ARGS…]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	var toChild, toHost io.Writer = in, os.Stdout
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		toChild, toHost = io.MultiWriter(f, in), io.MultiWriter(f, os.Stdout)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	go func() {
		// Left in its read when the child ends first, like any shim whose
		// host keeps stdin open; the process exit ends it.
		io.Copy(toChild, os.Stdin)
		in.Close()
	}()
	io.Copy(toHost, out)
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
