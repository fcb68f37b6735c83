// Command flood-go is a fixture plugin that floods: the replay tests run
// it to see that a replay keeps only what the recording can explain. It
// reads nothing and writes until it is killed, as its argument says:
//
//	lines    one notification a line on stdout, without end
//	endless  one stdout line that never ends
//	stderr   one log line after another on stderr
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: flood-go lines|endless|stderr")
		os.Exit(2)
	}
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	switch os.Args[1] {
	case "lines":
		for {
			if _, err := out.WriteString(`{"jsonrpc":"2.0","method":"flood","params":{"n":1}}` + "\n"); err != nil {
				os.Exit(1)
			}
		}
	case "endless":
		out.WriteString(`{"jsonrpc":"2.0","method":"flood","params":{"text":"`)
		chunk := strings.Repeat("a", 64<<10)
		for {
			if _, err := out.WriteString(chunk); err != nil {
				os.Exit(1)
			}
		}
	case "stderr":
		log := bufio.NewWriterSize(os.Stderr, 64<<10)
		for {
			if _, err := log.WriteString("flood-go: one more log line that says nothing new\n"); err != nil {
				os.Exit(1)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "flood-go: unknown mode %q\n", os.Args[1])
	os.Exit(2)
}
