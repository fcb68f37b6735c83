// Command replaybench measures what `tapedeck replay` costs per frame
// against the floor: it records a session of N host notifications through
// `tapedeck record -- cat` (so the tape holds N frames each way), exports it
// as a tape, and then replays that tape against cat, taking turns round by
// round, with `tapedeck replay` and with bench/lockstep, the minimal
// lockstep replayer. It prints the wall and CPU time per frame of each
// (CPU: user + system of the replayer and the cat it waited for) and their
// ratios, medians over the rounds. With -baseline, another tapedeck build
// (an older one) takes its turn too, and the ratio of the two is printed.
// With -hello, it also times the replays per minute of the bundled Go
// plugin's tape (testdata/tapes/hello-go.jsonl against the hello-go binary
// given), one process replaying it -runs times (`replay --runs`): tapedeck
// with its default -j (one more than the CPUs: runs side by side) and with
// -j 1 (one after the other), and the baseline as it is, each in turn,
// with the ratios of both tapedeck variants to the baseline. It reports;
// it does not judge.
//
// Usage (bench/replay.sh does this, from the module root):
//
//	replaybench -tapedeck PATH -lockstep PATH [-baseline PATH] [-hello PATH]
//	            [-frames 10000] [-rounds 7] [-runs 200]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/bench/internal/measure"
)

func main() {
	td := flag.String("tapedeck", "", "path of the tapedeck binary (required)")
	ls := flag.String("lockstep", "", "path of the lockstep replayer (required)")
	base := flag.String("baseline", "", "path of another tapedeck build to compare with (optional)")
	hello := flag.String("hello", "", "path of the built hello-go fixture: also time replays per minute of its tape (optional)")
	frames := flag.Int("frames", 10000, "frames on the tape (half host, half plugin)")
	rounds := flag.Int("rounds", 7, "rounds; each replays the tape once with each replayer")
	runs := flag.Int("runs", 200, "with -hello: replays of the Go plugin's tape per process")
	flag.Parse()
	if *td == "" || *ls == "" {
		fmt.Fprintln(os.Stderr, "replaybench: -tapedeck and -lockstep are required")
		os.Exit(2)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "tapedeck-replaybench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	store := filepath.Join(tmp, "store")
	tape := filepath.Join(tmp, "tape.jsonl")

	// Record one line at a time, waiting for its echo, so that the tape is
	// in lockstep (host frame, plugin frame, …) as the replayers replay it.
	rec := exec.Command(*td, "--store", store, "record", "--", cat)
	rec.Stderr = os.Stderr
	recIn, err := rec.StdinPipe()
	if err != nil {
		fatal(err)
	}
	recOut, err := rec.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := rec.Start(); err != nil {
		fatal(err)
	}
	echoed := bufio.NewReader(recOut)
	for i := range *frames / 2 {
		fmt.Fprintf(recIn, `{"jsonrpc":"2.0","method":"tick","params":{"n":%d,"text":"the plugin says the same thing back"}}`+"\n", i)
		if _, err := echoed.ReadBytes('\n'); err != nil {
			fatal(fmt.Errorf("record: %w", err))
		}
	}
	recIn.Close()
	if err := rec.Wait(); err != nil {
		fatal(fmt.Errorf("record: %w", err))
	}
	out, err := exec.Command(*td, "--store", store, "export", "last").Output()
	if err != nil {
		fatal(fmt.Errorf("export: %w", err))
	}
	if err := os.WriteFile(tape, out, 0o600); err != nil {
		fatal(err)
	}

	load0 := measure.LoadAvg()
	fmt.Printf("replay benchmark  %s  load average at start %s\n", time.Now().Format(time.DateTime), load0)
	fmt.Printf("tape: %d frames (%d host notifications, each echoed by cat)\n\n", *frames, *frames/2)
	replayers := []struct {
		name string
		argv []string
	}{
		{"tapedeck replay", []string{*td, "--store", store, "replay", tape}},
		{"lockstep", []string{*ls, tape, "--", cat}},
	}
	if *base != "" {
		replayers = append(replayers, struct {
			name string
			argv []string
		}{"baseline replay", []string{*base, "--store", store, "replay", tape}})
	}
	wall := make([][]float64, len(replayers))
	cpu := make([][]float64, len(replayers))
	var wallRatio, cpuRatio, baseWall, baseCPU []float64
	for round := range *rounds {
		w := make([]float64, len(replayers))
		c := make([]float64, len(replayers))
		for j := range replayers {
			k := (round + j) % len(replayers)
			r := replayers[k]
			cmd := exec.Command(r.argv[0], r.argv[1:]...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				fatal(fmt.Errorf("%s: %v: %s", r.name, err, strings.TrimSpace(stderr.String())))
			}
			w[k] = float64(time.Since(t0)) / float64(*frames)
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			c[k] = float64(time.Duration(ru.Utime.Nano()+ru.Stime.Nano())) / float64(*frames)
		}
		for k := range replayers {
			wall[k] = append(wall[k], w[k])
			cpu[k] = append(cpu[k], c[k])
		}
		wallRatio = append(wallRatio, w[0]/w[1])
		cpuRatio = append(cpuRatio, c[0]/c[1])
		if *base != "" {
			baseWall = append(baseWall, w[0]/w[2])
			baseCPU = append(baseCPU, c[0]/c[2])
		}
	}
	fmt.Printf("%-18s %14s %14s\n", "replayer", "wall/frame", "cpu/frame")
	for k, r := range replayers {
		fmt.Printf("%-18s %12.1fµs %12.1fµs\n", r.name, measure.Median(wall[k])/1e3, measure.Median(cpu[k])/1e3)
	}
	fmt.Printf("%-18s %13.2f× %13.2f×   (median of %d rounds' ratios; range %.2f–%.2f wall)\n",
		"tapedeck÷lockstep", measure.Median(wallRatio), measure.Median(cpuRatio), *rounds, slices.Min(wallRatio), slices.Max(wallRatio))
	if *base != "" {
		fmt.Printf("%-18s %13.2f× %13.2f×   (range %.2f–%.2f wall)\n",
			"tapedeck÷baseline", measure.Median(baseWall), measure.Median(baseCPU), slices.Min(baseWall), slices.Max(baseWall))
	}
	fmt.Printf("load average at start %s, at end %s\n", load0, measure.LoadAvg())
	if *hello != "" {
		perMinute(*td, *base, *hello, store, *rounds, *runs)
	}
}

// perMinute times replays per minute of the bundled Go plugin's tape: one
// `replay --runs N` a variant a round, taking turns: tapedeck with its
// default -j (one more than the CPUs), tapedeck with -j 1 and, when given, the
// baseline (as it is: an older build may have no -j). It prints the
// median of each and of the per-round ratios of each tapedeck variant to
// the baseline, with the load average.
func perMinute(td, base, hello, store string, rounds, runs int) {
	const tape = "testdata/tapes/hello-go.jsonl"
	variants := []struct {
		name string
		argv []string
	}{
		{"tapedeck (default -j)", []string{td}},
		{"tapedeck -j 1", []string{td, "-j", "1"}},
	}
	if base != "" {
		variants = append(variants, struct {
			name string
			argv []string
		}{"baseline", []string{base}})
	}
	fmt.Printf("\nreplays per minute of %s against %s (%d replays a process, %d rounds; tapedeck's default -j is one more than the %d CPUs), load average %s\n",
		tape, hello, runs, rounds, runtime.NumCPU(), measure.LoadAvg())
	rates := make([][]float64, len(variants))
	ratios := make([][]float64, len(variants)) // of each tapedeck variant to the baseline
	for round := range rounds {
		r := make([]float64, len(variants))
		for j := range variants {
			k := (round + j) % len(variants)
			v := variants[k]
			args := append([]string{"--store", store, "replay", "--runs", fmt.Sprint(runs)}, v.argv[1:]...)
			cmd := exec.Command(v.argv[0], append(args, tape, "--", hello)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				fatal(fmt.Errorf("%s replay --runs: %v: %s", v.name, err, strings.TrimSpace(stderr.String())))
			}
			r[k] = float64(runs) / time.Since(t0).Minutes()
			rates[k] = append(rates[k], r[k])
		}
		if base != "" {
			for k := range variants[:len(variants)-1] {
				ratios[k] = append(ratios[k], r[k]/r[len(variants)-1])
			}
		}
	}
	for k, v := range variants {
		fmt.Printf("%-32s %10.0f/min\n", v.name, measure.Median(rates[k]))
	}
	if base != "" {
		for k, v := range variants[:len(variants)-1] {
			fmt.Printf("%-32s %9.2f×       (median of the rounds' ratios; range %.2f–%.2f)\n",
				v.name+"÷baseline", measure.Median(ratios[k]), slices.Min(ratios[k]), slices.Max(ratios[k]))
		}
	}
	fmt.Printf("load average at end %s\n", measure.LoadAvg())
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "replaybench:", err)
	os.Exit(1)
}
