// Command tapedeck records, replays and diffs sessions of Agentty plugins.
//
// It only builds and runs the command line; the commands live in package
// cli, the work in the packages they call.
package main

import (
	"os"

	"github.com/tapedeck/tapedeck/internal/cli"
)

func main() { os.Exit(cli.Run(os.Args, os.Stdin, os.Stdout, os.Stderr)) }
