// Command echo is the child of the relay benchmark: it copies its stdin to
// its stdout through a 64 KiB buffer, writing out every read at once (no
// buffering across reads), so a line comes back as soon as it arrives. It
// exits 0 at end of input and quietly when its stdout goes away.
package main

import (
	"io"
	"os"
)

func main() {
	buf := make([]byte, 64<<10)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
				os.Exit(1)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			os.Stderr.WriteString("echo: " + err.Error() + "\n")
			os.Exit(1)
		}
	}
}
