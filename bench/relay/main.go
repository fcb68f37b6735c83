// Command relay measures what `tapedeck record` costs a plugin against the
// floor: in the same run, taking turns, it drives the same echo child
// through a direct pipe, through a minimal reference relay (bench/refrelay:
// Go, io.Copy both ways, nothing recorded), through the same relay writing
// every byte to a file as it passes (refrelay -record: the least a relay
// that records can do), through `tapedeck record` and
// through `tapedeck record --no-record`, and prints the round-trip latency
// of 200-byte lines, the throughput for 1 KiB, 1 MiB and 16 MiB lines and
// the peak RSS with 16 MiB lines, each with its ratio to the reference (the
// added latency) or to the direct pipe (throughput). It reports; it does not
// fail when a target is missed.
//
// Usage (from the module root; bench/run.sh does this):
//
//	go run ./bench/relay -tapedeck PATH [-baseline PATH] [-echo PATH] [-ref PATH] [-n 5000] [-rounds 3] [-quick]
//
// Linux only: it reads /proc and ru_maxrss in KiB.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/bench/internal/measure"
)

const (
	kib = 1 << 10
	mib = 1 << 20

	latencyLine = 200 // bytes per latency probe, "\n" included
	stageLimit  = 90 * time.Second

	// The targets (issue 32, "the relay stays at its floor"), as ratios
	// measured in one run: the added latency against the io.Copy relay,
	// throughput against the relay that appends every byte to a file
	// before forwarding it (the physical floor of a recording relay).
	targetP50   = 1.2 // tapedeck's added p50 ÷ the reference relay's
	targetP99   = 1.5 // the same for p99
	targetRatio = 0.9 // throughput ÷ reference + file, every line size
	targetRSS   = 16 * mib
)

// The relays, by name.
const (
	direct   = "direct"
	cat      = "cat"
	ref      = "reference"
	refFile  = "reference + file"
	td       = "tapedeck"
	tdNoRec  = "tapedeck --no-record"
	tdBase   = "tapedeck baseline"
	refLabel = "reference relay"
)

// kind is what runs at the other end of the pipes.
type kind struct {
	name string
	argv func(store string) []string // store is a fresh folder for tapedeck and the recording reference, "" otherwise
}

// needsStore reports whether the relay named name writes into a folder of
// its own, made fresh for each run and removed after it.
func needsStore(name string) bool { return strings.HasPrefix(name, td) || name == refFile }

func main() {
	tapedeck := flag.String("tapedeck", "", "path of the tapedeck binary to measure (required)")
	echoPath := flag.String("echo", "", "path of the echo child (default: built from ./bench/echo into a temp dir)")
	refPath := flag.String("ref", "", "path of the reference relay (default: built from ./bench/refrelay into a temp dir)")
	rounds := flag.Int("n", 5000, "latency round trips per relay (a tenth more are sent first as warm-up)")
	tputRounds := flag.Int("rounds", 3, "throughput rounds (each runs every relay once per line size, in turn)")
	quick := flag.Bool("quick", false, "small sizes and one throughput round, for a smoke run")
	framing := flag.String("framing", "lines", "how messages are framed: lines, or headers (a Content-Length block before each body, as language servers speak)")
	baseline := flag.String("baseline", "", "path of a second tapedeck binary (say, built from the last commit) to measure in the same run, recording")
	flag.Parse()
	if *tapedeck == "" {
		fmt.Fprintln(os.Stderr, "relay: -tapedeck PATH is required")
		os.Exit(2)
	}
	if *rounds < 10 {
		fmt.Fprintln(os.Stderr, "relay: -n must be at least 10")
		os.Exit(2)
	}
	tdPath, err := filepath.Abs(*tapedeck)
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "tapedeck-relay-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	echo := built(tmp, *echoPath, "echo", "./bench/echo")
	refRelay := built(tmp, *refPath, "refrelay", "./bench/refrelay")

	kinds := []kind{
		{direct, func(string) []string { return []string{echo} }},
		{ref, func(string) []string { return []string{refRelay, echo} }},
		{refFile, func(store string) []string {
			return []string{refRelay, "-record", filepath.Join(store, "relayed"), echo}
		}},
		{td, func(store string) []string { return []string{tdPath, "--store", store, "record", "--", echo} }},
		{tdNoRec, func(store string) []string {
			return []string{tdPath, "--store", store, "record", "--no-record", "--", echo}
		}},
	}
	if *baseline != "" {
		basePath, err := filepath.Abs(*baseline)
		if err != nil {
			fatal(err)
		}
		kinds = append(kinds, kind{tdBase, func(store string) []string {
			return []string{basePath, "--store", store, "record", "--", echo}
		}})
	}
	if c, err := exec.LookPath("cat"); err == nil {
		kinds = slices.Insert(kinds, 1, kind{cat, func(string) []string { return []string{c} }})
	}

	type sizeRun struct {
		line  int
		total int64
	}
	sizes := []sizeRun{{1 * kib, 256 * mib}, {1 * mib, 128 * mib}, {16 * mib, 128 * mib}}
	warm := *rounds / 10
	if *quick {
		sizes = []sizeRun{{1 * kib, 16 * mib}, {1 * mib, 16 * mib}, {16 * mib, 32 * mib}}
		*tputRounds = 1
	}
	*tputRounds = max(*tputRounds, 1)

	load0 := measure.LoadAvg()
	fmt.Printf("tapedeck relay benchmark  %s  %s/%s kernel %s  %d CPUs  load average at start %s\n",
		time.Now().Format(time.DateTime), runtime.GOOS, runtime.GOARCH, kernel(), runtime.NumCPU(), load0)
	fmt.Printf("tapedeck: %s\nchild:    %s (64 KiB reads, one write per read)\nreference relay: %s (io.Copy both ways, records nothing)\n\n", tdPath, echo, refRelay)

	r := &runner{tmp: tmp, headers: *framing == "headers"}
	if *framing != "lines" && *framing != "headers" {
		fmt.Fprintln(os.Stderr, "relay: -framing must be lines or headers")
		os.Exit(2)
	}
	fmt.Printf("framing: %s\n\n", *framing)

	// Latency.
	lat, err := r.latency(kinds, *rounds, warm)
	if err != nil {
		fmt.Fprintf(os.Stderr, "relay: latency: %v\n", err)
	}
	fmt.Printf("Round-trip latency, %d-byte line: write one, wait for its echo; %d rounds after %d warm-up,\n", latencyLine, *rounds, warm)
	fmt.Println("the relays taking turns round by round")
	tw := &table{}
	tw.row("relay", "p50", "p90", "p99", "max", "mean")
	for _, k := range kinds {
		s, ok := lat[k.name]
		if !ok {
			tw.row(k.name, "error", "", "", "", "")
			continue
		}
		tw.row(k.name, us(s.p50), us(s.p90), us(s.p99), us(s.max), us(s.mean))
	}
	d, dok := lat[direct]
	added := map[string]stats{}
	for _, name := range []string{ref, refFile, td, tdNoRec, tdBase} {
		if s, ok := lat[name]; ok && dok {
			a := stats{p50: s.p50 - d.p50, p90: s.p90 - d.p90, p99: s.p99 - d.p99, mean: s.mean - d.mean}
			added[name] = a
			tw.row("added: "+name+" − direct", us(a.p50), us(a.p90), us(a.p99), "", us(a.mean))
		}
	}
	ra, rok := added[ref]
	for _, name := range []string{td, tdNoRec, tdBase} {
		if a, ok := added[name]; ok && rok {
			tw.row("ratio: "+name+" added ÷ reference added", ratio(a.p50, ra.p50), ratio(a.p90, ra.p90), ratio(a.p99, ra.p99), "", ratio(a.mean, ra.mean))
		}
	}
	tw.print()
	fmt.Println()

	// Throughput: every round runs each size on every relay, in an order
	// that rotates, so that noise on the machine hits them alike; ratios to
	// the direct pipe are taken round by round, then their median.
	type tput struct {
		mbs    map[string][]float64
		ratios map[string][]float64
		exit   []time.Duration // tapedeck: stdin closed → exited (ingest of the spool)
		cpu    []float64       // tapedeck: CPU time while streaming / wall time
		rss    map[string]int64
		hwm    int64 // tapedeck: VmHWM just before stdin was closed, bytes
		// the same for the relay alone and the reference
		hwmNoRec, hwmRef int64
		dbSize           int64
		left             bool
		vsFile           []float64 // tapedeck ÷ the reference that writes every byte to a file, round by round
		vsBase           []float64 // tapedeck ÷ the baseline tapedeck, round by round (with -baseline)
	}
	tputs := make([]tput, len(sizes))
	for i := range tputs {
		tputs[i] = tput{mbs: map[string][]float64{}, ratios: map[string][]float64{}, rss: map[string]int64{}}
	}
	for round := range *tputRounds {
		for i, sz := range sizes {
			tp := &tputs[i]
			got := map[string]float64{}
			for j := range kinds {
				k := kinds[(round+i+j)%len(kinds)]
				res, err := r.throughput(k, sz.line, sz.total)
				if err != nil {
					fmt.Fprintf(os.Stderr, "relay: throughput %s, %s lines: %v\n", k.name, size(int64(sz.line)), err)
					continue
				}
				mbs := float64(sz.total) / res.elapsed.Seconds() / 1e6
				got[k.name] = mbs
				tp.mbs[k.name] = append(tp.mbs[k.name], mbs)
				tp.rss[k.name] = max(tp.rss[k.name], res.maxrss)
				switch k.name {
				case tdNoRec:
					tp.hwmNoRec = max(tp.hwmNoRec, res.hwm)
				case ref:
					tp.hwmRef = max(tp.hwmRef, res.hwm)
				}

				if k.name == td {
					tp.exit = append(tp.exit, res.exit)
					tp.cpu = append(tp.cpu, res.cpu.Seconds()/res.elapsed.Seconds())
					tp.hwm = max(tp.hwm, res.hwm)
					tp.dbSize, tp.left = res.dbSize, res.leftover
				}
			}
			if base, ok := got[direct]; ok {
				for name, v := range got {
					tp.ratios[name] = append(tp.ratios[name], v/base)
				}
			}
			if a, b := got[td], got[refFile]; a > 0 && b > 0 {
				tp.vsFile = append(tp.vsFile, a/b)
			}
			if a, b := got[td], got[tdBase]; a > 0 && b > 0 {
				tp.vsBase = append(tp.vsBase, a/b)
			}
		}
	}
	fmt.Printf("Throughput, MB/s (10^6 bytes/s of lines through the relay and back; a writer streams, a reader drains);\n")
	fmt.Printf("medians of %d round(s); ratios are to the direct pipe, round by round, then their median\n", *tputRounds)
	tw = &table{}
	hdr := []string{"line", "total"}
	for _, k := range kinds {
		hdr = append(hdr, k.name)
	}
	hdr = append(hdr, "reference/direct", "ref+file/direct", "tapedeck/direct", "--no-record/direct", "baseline/direct", "tapedeck/ref+file", "tapedeck/baseline", "tapedeck cpu", "exit+ingest", "db file", "tapedeck VmHWM")
	tw.row(hdr...)
	minRatio := math.Inf(1) // tapedeck ÷ reference + file, the lowest line size's median
	for i, sz := range sizes {
		tp := tputs[i]
		row := []string{size(int64(sz.line)), size(sz.total)}
		for _, k := range kinds {
			if v := tp.mbs[k.name]; len(v) > 0 {
				row = append(row, fmt.Sprintf("%.0f", measure.Median(v)))
			} else {
				row = append(row, "error")
			}
		}
		for _, name := range []string{ref, refFile, td, tdNoRec, tdBase} {
			if v := tp.ratios[name]; len(v) > 0 && len(v) == len(tp.ratios[direct]) {
				m := measure.Median(v)
				row = append(row, fmt.Sprintf("%.2f× (%s)", m, spread(v)))
			} else {
				row = append(row, "-")
				if name == td {
					minRatio = math.NaN()
				}
			}
		}
		if len(tp.vsFile) > 0 {
			minRatio = min(minRatio, measure.Median(tp.vsFile))
		} else {
			minRatio = math.NaN()
		}
		for _, v := range [][]float64{tp.vsFile, tp.vsBase} {
			if len(v) > 0 {
				row = append(row, fmt.Sprintf("%.2f× (%s)", measure.Median(v), spread(v)))
			} else {
				row = append(row, "-")
			}
		}
		db := size(tp.dbSize)
		if tp.left {
			db += " (spool left)"
		}
		var exits []float64
		for _, e := range tp.exit {
			exits = append(exits, float64(e))
		}
		row = append(row, fmt.Sprintf("%.0f%%", 100*measure.Median(tp.cpu)), time.Duration(measure.Median(exits)).Round(time.Millisecond).String(), db, size(tp.hwm))
		tw.row(row...)
	}
	tw.print()
	fmt.Println()

	big := tputs[len(tputs)-1]
	fmt.Printf("Peak RSS, %s lines (the largest of the rounds)\n", size(int64(sizes[len(sizes)-1].line)))
	tw = &table{}
	tw.row("process", "peak RSS", "what")
	tw.row(td, size(big.hwm), "VmHWM before stdin was closed: relaying and recording (the spool of this run is too big to ingest at exit)")
	tw.row(td, size(big.rss[td]), "ru_maxrss after exit; an upper bound: on Linux a child's ru_maxrss starts at its parent's peak (os/exec spawns with CLONE_VM)")
	tw.row(tdNoRec, size(big.hwmNoRec), "VmHWM: the relay alone")
	tw.row(refLabel, size(big.hwmRef), "VmHWM, for scale")
	tw.row("target", size(targetRSS), "VmHWM of tapedeck")
	tw.print()
	fmt.Println()

	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	var parts []string
	if a, ok := added[td]; ok && rok {
		p50, p99 := float64(a.p50)/float64(ra.p50), float64(a.p99)/float64(ra.p99)
		parts = append(parts,
			fmt.Sprintf("added p50 %.2f× the reference's ≤ %.1f×: %s", p50, targetP50, verdict(p50 <= targetP50)),
			fmt.Sprintf("added p99 %.2f× ≤ %.1f×: %s", p99, targetP99, verdict(p99 <= targetP99)))
	} else {
		parts = append(parts, "added latency: not measured")
	}
	if !math.IsNaN(minRatio) && !math.IsInf(minRatio, 1) {
		parts = append(parts, fmt.Sprintf("throughput min %.2f× reference + file ≥ %.2f×: %s", minRatio, targetRatio, verdict(minRatio >= targetRatio)))
	} else {
		parts = append(parts, "throughput: not measured")
	}
	if rss := big.hwm; rss > 0 {
		parts = append(parts, fmt.Sprintf("peak RSS %s ≤ %s: %s", size(rss), size(targetRSS), verdict(rss <= targetRSS)))
	} else {
		parts = append(parts, "peak RSS: not measured")
	}
	fmt.Println("targets: " + strings.Join(parts, "; "))
	fmt.Printf("load average at start %s, at end %s\n", load0, measure.LoadAvg())
}

// built returns path, or builds pkg into dir/name when path is "".
func built(dir, path, name, pkg string) string {
	if path == "" {
		path = filepath.Join(dir, name)
		build := exec.Command("go", "build", "-o", path, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fatal(fmt.Errorf("build %s (run from the module root or pass its path): %w", pkg, err))
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		fatal(err)
	}
	return abs
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

// spread is the range of v, "min–max".
func spread(v []float64) string {
	return fmt.Sprintf("%.2f–%.2f", slices.Min(v), slices.Max(v))
}

// runner starts relays and measures them.
type runner struct {
	tmp string
	seq int
	// headers: the messages are header-framed (Content-Length blocks, as
	// language servers speak) instead of lines.
	headers bool
}

// message fills b with one message of len(b) bytes: a line ("\n" last)
// or, with headers, a Content-Length block and a body.
func (r *runner) message(b []byte) {
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	if !r.headers {
		b[len(b)-1] = '\n'
		return
	}
	for n := len(b) - 20; n > 0; n-- {
		head := fmt.Sprintf("Content-Length: %d\r\n\r\n", n)
		if len(head)+n == len(b) {
			copy(b, head)
			return
		}
	}
	panic("message too short for a header block")
}

// proc is one running relay with blocking pipes on our side.
type proc struct {
	cmd    *exec.Cmd
	in     *os.File // we write the child's stdin
	out    *os.File // we read the child's stdout
	stderr *bytes.Buffer
	store  string // tapedeck's store folder, or ""
	timer  *time.Timer
}

func (r *runner) start(k kind) (*proc, error) {
	store := ""
	if needsStore(k.name) {
		r.seq++
		store = filepath.Join(r.tmp, fmt.Sprintf("store-%d", r.seq))
		if k.name == refFile {
			// tapedeck makes its store; the reference's file needs a folder.
			if err := os.Mkdir(store, 0o700); err != nil {
				return nil, err
			}
		}
	}
	argv := k.argv(store)
	// Blocking pipes: our reads and writes are plain system calls, with no
	// poller in between, so the harness adds the same small cost to every
	// relay.
	var inFds, outFds [2]int
	if err := syscall.Pipe2(inFds[:], syscall.O_CLOEXEC); err != nil {
		return nil, err
	}
	if err := syscall.Pipe2(outFds[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(inFds[0])
		syscall.Close(inFds[1])
		return nil, err
	}
	childIn := os.NewFile(uintptr(inFds[0]), "child-stdin")
	childOut := os.NewFile(uintptr(outFds[1]), "child-stdout")
	p := &proc{
		in:     os.NewFile(uintptr(inFds[1]), "stdin"),
		out:    os.NewFile(uintptr(outFds[0]), "stdout"),
		stderr: &bytes.Buffer{},
		store:  store,
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = childIn, childOut, p.stderr
	err := p.cmd.Start()
	childIn.Close()
	childOut.Close()
	if err != nil {
		p.in.Close()
		p.out.Close()
		return nil, err
	}
	p.timer = time.AfterFunc(stageLimit, func() { p.cmd.Process.Kill() })
	return p, nil
}

// finish closes the child's stdin, drains its stdout and waits for it. It
// returns how long the exit took and the process's ru_maxrss in bytes.
func (p *proc) finish() (time.Duration, int64, error) {
	t0 := time.Now()
	p.in.Close()
	io.Copy(io.Discard, p.out)
	err := p.cmd.Wait()
	took := time.Since(t0)
	p.timer.Stop()
	p.out.Close()
	var maxrss int64
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxrss = ru.Maxrss * 1024 // KiB on Linux
		if runtime.GOOS == "darwin" {
			maxrss = ru.Maxrss
		}
	}
	if err != nil {
		err = fmt.Errorf("%v; stderr: %q", err, strings.TrimSpace(p.stderr.String()))
	} else if p.stderr.Len() > 0 {
		fmt.Fprintf(os.Stderr, "relay: %s said on stderr: %s\n", filepath.Base(p.cmd.Path), strings.TrimSpace(p.stderr.String()))
	}
	return took, maxrss, err
}

func (p *proc) cleanup() {
	if p.store != "" {
		os.RemoveAll(p.store)
	}
}

type stats struct {
	p50, p90, p99, max, mean time.Duration
}

// latency starts every relay and times round trips of one line on each,
// interleaved: every round visits all relays, in an order that rotates, so
// that a burst of noise on the machine hits them alike.
func (r *runner) latency(kinds []kind, rounds, warm int) (map[string]stats, error) {
	procs := make([]*proc, 0, len(kinds))
	defer func() {
		for _, p := range procs {
			p.cleanup()
		}
	}()
	for _, k := range kinds {
		p, err := r.start(k)
		if err != nil {
			for _, p := range procs {
				p.finish()
			}
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		procs = append(procs, p)
	}
	line := make([]byte, latencyLine)
	r.message(line)
	got := make([]byte, 64*kib)
	samples := make([][]time.Duration, len(procs))
	failed := make([]error, len(procs))

	roundTrip := func(p *proc) (time.Duration, error) {
		in, out := int(p.in.Fd()), int(p.out.Fd())
		t0 := time.Now()
		if _, err := syscall.Write(in, line); err != nil {
			return 0, fmt.Errorf("write: %w", err)
		}
		n := 0
		for n < len(line) {
			m, err := syscall.Read(out, got[n:])
			if err == syscall.EINTR {
				continue
			}
			if err != nil || m == 0 {
				return 0, fmt.Errorf("read: %v (eof %v)", err, m == 0)
			}
			n += m
		}
		d := time.Since(t0)
		if !bytes.Equal(got[:n], line) {
			return 0, fmt.Errorf("echo differs: got %d bytes %q", n, got[:min(n, 40)])
		}
		return d, nil
	}

	runtime.LockOSThread()
	for i := 0; i < warm+rounds; i++ {
		copy(line, strconv.Itoa(i)) // every line distinct
		for j := range procs {
			k := (i + j) % len(procs)
			if failed[k] != nil {
				continue
			}
			d, err := roundTrip(procs[k])
			if err != nil {
				failed[k] = fmt.Errorf("round %d: %w", i, err)
				continue
			}
			if i >= warm {
				samples[k] = append(samples[k], d)
			}
		}
	}
	runtime.UnlockOSThread()

	res := map[string]stats{}
	var errs []string
	for k, p := range procs {
		_, _, err := p.finish()
		if failed[k] == nil {
			failed[k] = err
		}
		if failed[k] != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", kinds[k].name, failed[k]))
			continue
		}
		res[kinds[k].name] = summarize(samples[k])
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return res, nil
}

func summarize(samples []time.Duration) stats {
	slices.Sort(samples)
	pct := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		return samples[max(i, 0)]
	}
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return stats{
		p50:  pct(0.50),
		p90:  pct(0.90),
		p99:  pct(0.99),
		max:  samples[len(samples)-1],
		mean: sum / time.Duration(len(samples)),
	}
}

type tputResult struct {
	elapsed  time.Duration
	cpu      time.Duration // user+system CPU of the relay process until the stream was through
	exit     time.Duration
	maxrss   int64
	hwm      int64
	dbSize   int64
	leftover bool
}

// throughput streams total bytes of lines of lineSize bytes ("\n" included)
// from a writer goroutine while this goroutine drains the echo, and times
// from the first byte written to the last byte read, after one warm-up round
// trip.
func (r *runner) throughput(k kind, lineSize int, total int64) (tputResult, error) {
	p, err := r.start(k)
	if err != nil {
		return tputResult{}, err
	}
	defer p.cleanup()
	var res tputResult

	// Warm-up: the relay is up and has passed one message.
	warm := make([]byte, 64)
	r.message(warm)
	if _, err := p.in.Write(warm); err != nil {
		p.finish()
		return res, err
	}
	if _, err := io.ReadFull(p.out, make([]byte, len(warm))); err != nil {
		p.finish()
		return res, fmt.Errorf("warm-up: %w", err)
	}

	// The block written repeatedly: whole lines, about 1 MiB of them for
	// short lines, one line for long ones.
	perBlock := max(1, mib/lineSize)
	block := make([]byte, perBlock*lineSize)
	for i := 0; i < len(block); i += lineSize {
		r.message(block[i : i+lineSize])
	}
	blocks := total / int64(len(block))
	total = blocks * int64(len(block))

	werr := make(chan error, 1)
	t0 := time.Now()
	go func() {
		for range blocks {
			if _, err := p.in.Write(block); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	buf := make([]byte, mib)
	var got int64
	var last byte
	for got < total {
		n, err := p.out.Read(buf)
		if n > 0 {
			got += int64(n)
			last = buf[n-1]
		}
		if err != nil {
			break
		}
	}
	res.elapsed = time.Since(t0)
	if err := <-werr; err != nil {
		p.finish()
		return res, fmt.Errorf("write: %w", err)
	}
	if got != total || last != block[len(block)-1] {
		p.finish()
		return res, fmt.Errorf("read %d of %d bytes", got, total)
	}
	res.hwm = vmHWM(p.cmd.Process.Pid)
	res.cpu = cpuTime(p.cmd.Process.Pid)
	res.exit, res.maxrss, err = p.finish()
	if err != nil {
		return res, err
	}
	if p.store != "" {
		if fi, err := os.Stat(filepath.Join(p.store, "tapedeck.db")); err == nil {
			res.dbSize = fi.Size()
		}
		if spools, _ := filepath.Glob(filepath.Join(p.store, "spool", "*.spool")); len(spools) > 0 {
			res.leftover = true
		}
	}
	return res, nil
}

// vmHWM reads the peak resident set size of pid so far, in bytes, or 0.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cpuTime reads the user and system CPU time pid (all its threads) has used
// so far, at clock-tick resolution, or 0.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz
}

// table prints left-aligned columns.
type table struct{ rows [][]string }

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) print() {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
			}
		}
		fmt.Println(strings.TrimRight(b.String(), " "))
	}
}

func us(d time.Duration) string {
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}

func size(n int64) string {
	switch {
	case n >= mib && n%mib == 0:
		return fmt.Sprintf("%d MiB", n/mib)
	case n >= mib:
		return fmt.Sprintf("%.1f MiB", float64(n)/mib)
	case n >= kib && n%kib == 0:
		return fmt.Sprintf("%d KiB", n/kib)
	case n >= kib:
		return fmt.Sprintf("%.1f KiB", float64(n)/kib)
	}
	return fmt.Sprintf("%d B", n)
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "relay: %v\n", err)
	os.Exit(1)
}
