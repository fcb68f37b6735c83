// Command relay measures what `tapedeck record` costs a plugin: it runs the
// same echo child through a direct pipe and under `tapedeck --store DIR
// record -- CHILD`, in the same run, and prints the round-trip latency of
// 200-byte lines, the throughput for 1 KiB, 1 MiB and 16 MiB lines, and the
// peak RSS of the tapedeck process while it relays 16 MiB lines. It reports;
// it does not fail when a target is missed.
//
// Usage (from the module root; bench/run.sh does this):
//
//	go run ./bench/relay -tapedeck /path/to/tapedeck [-echo /path/to/echo] [-n 5000] [-quick]
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
)

const (
	kib = 1 << 10
	mib = 1 << 20

	latencyLine = 200 // bytes per latency probe, "\n" included
	stageLimit  = 90 * time.Second

	targetAddedP50 = 50 * time.Microsecond
	targetAddedP99 = 250 * time.Microsecond
	targetRatio    = 0.5
	targetRSS      = 64*mib + 2*16*mib
)

// kind is what runs at the other end of the pipes.
type kind struct {
	name string
	argv func(store string) []string // store is a fresh folder for tapedeck, "" otherwise
}

func main() {
	tapedeck := flag.String("tapedeck", "", "path of the tapedeck binary to measure (required)")
	echoPath := flag.String("echo", "", "path of the echo child (default: built from ./bench/echo into a temp dir)")
	rounds := flag.Int("n", 5000, "latency round trips per relay (a tenth more are sent first as warm-up)")
	quick := flag.Bool("quick", false, "small sizes for a smoke run")
	flag.Parse()
	if *tapedeck == "" {
		fmt.Fprintln(os.Stderr, "relay: -tapedeck PATH is required")
		os.Exit(2)
	}
	if *rounds < 10 {
		fmt.Fprintln(os.Stderr, "relay: -n must be at least 10")
		os.Exit(2)
	}
	td, err := filepath.Abs(*tapedeck)
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "tapedeck-relay-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	echo := *echoPath
	if echo == "" {
		echo = filepath.Join(tmp, "echo")
		build := exec.Command("go", "build", "-o", echo, "./bench/echo")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fatal(fmt.Errorf("build ./bench/echo (run from the module root or pass -echo): %w", err))
		}
	}
	if echo, err = filepath.Abs(echo); err != nil {
		fatal(err)
	}

	echoKind := kind{"echo", func(string) []string { return []string{echo} }}
	tdKind := kind{"tapedeck", func(store string) []string {
		return []string{td, "--store", store, "record", "--", echo}
	}}
	kinds := []kind{echoKind, tdKind}
	if cat, err := exec.LookPath("cat"); err == nil {
		catKind := kind{"cat", func(string) []string { return []string{cat} }}
		kinds = append([]kind{catKind}, kinds...)
	}

	type sizeRun struct {
		line  int
		total int64
	}
	sizes := []sizeRun{{1 * kib, 256 * mib}, {1 * mib, 128 * mib}, {16 * mib, 128 * mib}}
	warm := *rounds / 10
	if *quick {
		sizes = []sizeRun{{1 * kib, 16 * mib}, {1 * mib, 16 * mib}, {16 * mib, 32 * mib}}
	}

	fmt.Printf("tapedeck relay benchmark  %s  %s/%s kernel %s  %d CPUs\n",
		time.Now().Format(time.DateTime), runtime.GOOS, runtime.GOARCH, kernel(), runtime.NumCPU())
	fmt.Printf("tapedeck: %s\nchild:    %s (64 KiB reads, one write per read)\n\n", td, echo)

	r := &runner{tmp: tmp}

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
	e, eok := lat["echo"]
	t, tok := lat["tapedeck"]
	var addP50, addP99 time.Duration
	if eok && tok {
		addP50, addP99 = t.p50-e.p50, t.p99-e.p99
		tw.row("added (tapedeck − echo)", us(addP50), us(t.p90-e.p90), us(addP99), "", us(t.mean-e.mean))
	}
	if c, ok := lat["cat"]; ok && tok {
		tw.row("tapedeck − cat", us(t.p50-c.p50), us(t.p90-c.p90), us(t.p99-c.p99), "", us(t.mean-c.mean))
	}
	tw.print()
	fmt.Println()

	// Throughput.
	type tput struct {
		mbs      map[string]float64
		exit     time.Duration // tapedeck: stdin closed → exited (ingest of the spool)
		cpu      float64       // tapedeck: CPU time while streaming / wall time
		maxrss   int64         // tapedeck: ru_maxrss, bytes
		hwm      int64         // tapedeck: VmHWM just before stdin was closed, bytes
		echoRSS  int64
		dbSize   int64
		leftover bool
	}
	var tputs []tput
	for _, sz := range sizes {
		tp := tput{mbs: map[string]float64{}}
		for _, k := range kinds {
			res, err := r.throughput(k, sz.line, sz.total)
			if err != nil {
				fmt.Fprintf(os.Stderr, "relay: throughput %s, %s lines: %v\n", k.name, size(int64(sz.line)), err)
				continue
			}
			tp.mbs[k.name] = float64(sz.total) / res.elapsed.Seconds() / 1e6
			switch k.name {
			case "tapedeck":
				tp.exit, tp.maxrss, tp.hwm, tp.dbSize, tp.leftover = res.exit, res.maxrss, res.hwm, res.dbSize, res.leftover
				tp.cpu = res.cpu.Seconds() / res.elapsed.Seconds()
			case "echo":
				tp.echoRSS = res.maxrss
			}
		}
		tputs = append(tputs, tp)
	}
	fmt.Println("Throughput, MB/s (10^6 bytes/s of lines through the relay and back; a writer streams, a reader drains)")
	tw = &table{}
	hdr := []string{"line", "total"}
	for _, k := range kinds {
		hdr = append(hdr, k.name)
	}
	hdr = append(hdr, "tapedeck/echo", "tapedeck cpu", "exit+ingest", "db file", "maxrss")
	tw.row(hdr...)
	minRatio, ratioOK := math.Inf(1), true
	for i, sz := range sizes {
		tp := tputs[i]
		row := []string{size(int64(sz.line)), size(sz.total)}
		for _, k := range kinds {
			if v, ok := tp.mbs[k.name]; ok {
				row = append(row, fmt.Sprintf("%.0f", v))
			} else {
				row = append(row, "error")
			}
		}
		d, dok := tp.mbs["echo"]
		t, tok := tp.mbs["tapedeck"]
		if dok && tok {
			ratio := t / d
			minRatio = min(minRatio, ratio)
			row = append(row, fmt.Sprintf("%.2f×", ratio))
		} else {
			ratioOK = false
			row = append(row, "-")
		}
		db := size(tp.dbSize)
		if tp.leftover {
			db += " (spool left)"
		}
		row = append(row, fmt.Sprintf("%.0f%%", 100*tp.cpu), tp.exit.Round(time.Millisecond).String(), db, size(tp.maxrss))
		tw.row(row...)
	}
	tw.print()
	fmt.Println()

	big := tputs[len(tputs)-1]
	fmt.Printf("Peak RSS of the tapedeck process, %s lines\n", size(int64(sizes[len(sizes)-1].line)))
	tw = &table{}
	tw.row("process", "peak RSS", "what")
	tw.row("tapedeck", size(big.maxrss), "ru_maxrss after exit: relay, recording and the ingest at exit")
	tw.row("tapedeck", size(big.hwm), "VmHWM before stdin was closed: relay and recording only")
	tw.row("echo", size(big.echoRSS), "ru_maxrss of the direct echo child, for scale")
	tw.row("target", size(targetRSS), "64 MiB + 2 × 16 MiB")
	tw.print()
	fmt.Println()

	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	var parts []string
	if eok && tok {
		parts = append(parts,
			fmt.Sprintf("added p50 %s ≤ 50µs: %s", us(addP50), verdict(addP50 <= targetAddedP50)),
			fmt.Sprintf("added p99 %s ≤ 250µs: %s", us(addP99), verdict(addP99 <= targetAddedP99)))
	} else {
		parts = append(parts, "added latency: not measured")
	}
	if ratioOK && !math.IsInf(minRatio, 1) {
		parts = append(parts, fmt.Sprintf("throughput min %.2f× ≥ 0.5× direct: %s", minRatio, verdict(minRatio >= targetRatio)))
	} else {
		parts = append(parts, "throughput: not measured")
	}
	if big.maxrss > 0 {
		parts = append(parts, fmt.Sprintf("peak RSS %s ≤ 96 MiB: %s", size(big.maxrss), verdict(big.maxrss <= targetRSS)))
	} else {
		parts = append(parts, "peak RSS: not measured")
	}
	fmt.Println("targets: " + strings.Join(parts, "; "))
}

// runner starts relays and measures them.
type runner struct {
	tmp string
	seq int
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
	if k.name == "tapedeck" {
		r.seq++
		store = filepath.Join(r.tmp, fmt.Sprintf("store-%d", r.seq))
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
	for i := range line {
		line[i] = 'a' + byte(i%26)
	}
	line[len(line)-1] = '\n'
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

	// Warm-up: the relay is up and has passed one line.
	if _, err := p.in.Write([]byte("warm-up\n")); err != nil {
		p.finish()
		return res, err
	}
	if _, err := io.ReadFull(p.out, make([]byte, len("warm-up\n"))); err != nil {
		p.finish()
		return res, fmt.Errorf("warm-up: %w", err)
	}

	// The block written repeatedly: whole lines, about 1 MiB of them for
	// short lines, one line for long ones.
	perBlock := max(1, mib/lineSize)
	block := make([]byte, perBlock*lineSize)
	for i := range block {
		block[i] = 'a' + byte(i%26)
	}
	for i := lineSize - 1; i < len(block); i += lineSize {
		block[i] = '\n'
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
	if got != total || last != '\n' {
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
