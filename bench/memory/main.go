// Command memory prints each tapedeck command's peak RSS on a big tape,
// and that peak divided by the size of the tape it reads: the figures of
// docs/performance.md. It writes two tapes of -frames frames (the host's
// ui/event notifications each answered by the plugin's ui/setBadge; the
// plugin is sed), the second with every 1,000th badge changed, then runs
// check, show, textconv, import, export, diff, diff --html, replay, test and shrink on
// them, one at a time, and reads each run's ru_maxrss.
//
//	go run ./bench/memory -tapedeck BIN [-frames N] [-skip replay,test,shrink]
//
// Standard library only; Linux (ru_maxrss in KiB).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tapedeck/tapedeck/bench/internal/measure"
	"github.com/tapedeck/tapedeck/internal/bigtape"
)

func main() {
	bin := flag.String("tapedeck", "", "the tapedeck binary to measure")
	frames := flag.Int("frames", 1000000, "frames in each tape")
	skip := flag.String("skip", "", "commands to leave out, comma-separated (replays of a big tape take minutes)")
	flag.Parse()
	if *bin == "" || *frames < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/memory -tapedeck BIN [-frames N] [-skip replay,test,shrink]")
		os.Exit(2)
	}
	if err := run(*bin, *frames, strings.Split(*skip, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		os.Exit(1)
	}
}

func run(bin string, frames int, skip []string) error {
	dir, err := os.MkdirTemp("", "tapedeck-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("load average at start: %s\n", measure.LoadAvg())
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	sizeA, err := bigtape.Write(a, frames, 0)
	if err != nil {
		return err
	}
	sizeB, err := bigtape.Write(b, frames, 1000)
	if err != nil {
		return err
	}
	store := filepath.Join(dir, "store")
	fmt.Printf("tapes: %d frames, %.1f MB each\n", frames, float64(sizeA)/1e6)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\tpeak RSS MB\ttape read MB\tRSS ÷ tape\ttook\texit\t")
	for _, c := range []struct {
		name string
		args []string
		read int64
	}{
		{"check", []string{"check", a}, sizeA},
		{"show", []string{"show", a}, sizeA},
		{"textconv", []string{"textconv", a}, sizeA},
		{"import", []string{"import", a}, sizeA},
		{"export", []string{"export", "big"}, sizeA},
		{"diff", []string{"diff", a, b}, sizeA + sizeB},
		{"diff --html", []string{"diff", "--html", filepath.Join(dir, "diff.html"), a, b}, sizeA + sizeB},
		{"replay", []string{"replay", a}, sizeA},
		{"test", []string{"test", a}, sizeA},
		{"shrink", []string{"shrink", "-j", "1", "--max-runs", "2", b, "-o", filepath.Join(dir, "min.jsonl")}, sizeB},
	} {
		if slices.Contains(skip, c.name) {
			continue
		}
		took, rss, code, err := measured(bin, append([]string{"--store", store}, c.args...))
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f×\t%v\t%d\t\n", c.name, float64(rss)/1e6, float64(c.read)/1e6, float64(rss)/float64(c.read), took.Round(10*time.Millisecond), code)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("load average at end: %s\n", measure.LoadAvg())
	return nil
}

// measured runs bin with args, its output thrown away, and returns how
// long it took, its peak RSS in bytes and its exit status.
func measured(bin string, args []string) (time.Duration, int64, int, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		return 0, 0, 0, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, 0, fmt.Errorf("no rusage on this system")
	}
	return took, ru.Maxrss * 1024, cmd.ProcessState.ExitCode(), nil
}
