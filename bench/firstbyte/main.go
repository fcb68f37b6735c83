// Command firstbyte measures what the environment fingerprint costs
// `tapedeck record`: the time from starting the shim to the host's first
// byte of the plugin's answer to initialize, and to the shim's exit, with
// the fingerprint and with --no-fingerprint, the two taking turns round
// by round so that both see the same machine.
//
//	go run ./bench/firstbyte -tapedeck BIN [-n 40] [-- PLUGIN ARGV…]
//
// The plugin defaults to node testdata/plugins/hello-node/main.mjs (run
// it from the module root).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"
)

func main() {
	bin := flag.String("tapedeck", "", "the tapedeck binary to measure (required)")
	n := flag.Int("n", 40, "rounds (each runs both variants once)")
	flag.Parse()
	plugin := flag.Args()
	if len(plugin) == 0 {
		plugin = []string{"node", "testdata/plugins/hello-node/main.mjs"}
	}
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "firstbyte: -tapedeck BIN is required")
		os.Exit(2)
	}
	variants := []struct {
		name  string
		flags []string
	}{
		{"with fingerprint", nil},
		{"--no-fingerprint", []string{"--no-fingerprint"}},
	}
	first := make([][]time.Duration, len(variants))
	exit := make([][]time.Duration, len(variants))
	for round := -2; round < *n; round++ { // two warm-up rounds
		for k := range variants {
			v := variants[(k+max(round, 0))%len(variants)] // alternate who goes first
			i := (k + max(round, 0)) % len(variants)
			fb, ex, err := once(*bin, v.flags, plugin)
			if err != nil {
				fmt.Fprintf(os.Stderr, "firstbyte: %s: %v\n", v.name, err)
				os.Exit(1)
			}
			if round >= 0 {
				first[i] = append(first[i], fb)
				exit[i] = append(exit[i], ex)
			}
		}
	}
	fmt.Printf("%d rounds, plugin %v, interleaved\n", *n, plugin)
	fmt.Printf("%-18s %-28s %s\n", "", "first byte p10/p50/p90", "shim exit after shutdown p10/p50/p90")
	for i, v := range variants {
		fmt.Printf("%-18s %-28s %s\n", v.name, spread(first[i]), spread(exit[i]))
	}
}

// once starts tapedeck record around plugin in a fresh store, sends
// initialize, times the first byte of stdout, then sends shutdown and
// times the shim's exit from there.
func once(bin string, flags, plugin []string) (firstByte, exit time.Duration, err error) {
	store, err := os.MkdirTemp("", "firstbyte-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(store)
	args := append(append([]string{"--store", store, "record"}, flags...), "--")
	cmd := exec.Command(bin, append(args, plugin...)...)
	cmd.Stderr = io.Discard
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"bench"}}}`+"\n")
	br := bufio.NewReader(out)
	if _, err := br.ReadByte(); err != nil {
		return 0, 0, fmt.Errorf("no output: %w", err)
	}
	firstByte = time.Since(start)
	br.ReadString('\n')
	io.WriteString(in, `{"jsonrpc":"2.0","method":"shutdown","params":{}}`+"\n")
	in.Close()
	t := time.Now()
	io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil {
		return 0, 0, err
	}
	return firstByte, time.Since(t), nil
}

func spread(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))].Round(100 * time.Microsecond) }
	return fmt.Sprintf("%v / %v / %v", q(0.1), q(0.5), q(0.9))
}
