package relay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// streamData is n bytes of lines of mixed lengths: short ones, some of a
// few KiB and one longer than a read buffer, so that every way a chunk can
// split a line shows up on both paths.
func streamData(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		size := 1 + (i*7919)%300
		switch {
		case i%97 == 3:
			size = 3 * bufSize / 2
		case i%13 == 5:
			size = 5000 + i%4096
		}
		for j := 0; j < size; j++ {
			b.WriteByte('a' + byte((i+j)%26))
		}
		b.WriteByte('\n')
	}
	b.WriteString("no newline at the end")
	return b.Bytes()
}

// flushOrderSink is a batchSink that checks, at every Flush, that the other end
// has not yet got the end of any line handed over since the last Flush: a
// line is stored before its "\n" is passed on.
type flushOrderSink struct {
	batchSink
	stored    int64         // lines handed over before the current chunk
	chunk     int64         // lines ended since the last Flush
	delivered *atomic.Int64 // line ends the other end has read so far
	early     int           // Flushes that found a line of the chunk delivered
}

func (s *flushOrderSink) Line(l *Line) {
	s.batchSink.Line(l)
	if l.Done && l.EOL {
		s.chunk++
	}
}

func (s *flushOrderSink) Lines(st Stream, block []byte, n int, at time.Time) {
	s.batchSink.Lines(st, block, n, at)
	s.chunk += int64(n)
}

func (s *flushOrderSink) Flush() {
	if s.delivered.Load() > s.stored {
		s.early++
	}
	s.stored += s.chunk
	s.chunk = 0
}

// pipeRun pumps data from a pipe to a pipe, writer and reader on their own
// goroutines, and returns what the reader got. closeAfter > 0: the reader
// stops and closes its end after that many bytes. delivered counts the
// line ends the reader has got.
func pipeRun(t *testing.T, p *pump, data []byte, closeAfter int, delivered *atomic.Int64) []byte {
	t.Helper()
	srcR, srcW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dstR, dstW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer srcW.Close()
		// Large writes, so that reads come in full buffers and the
		// zero-copy path is taken.
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1<<20)
			if _, err := srcW.Write(rest[:n]); err != nil {
				t.Errorf("write: %v", err)
				return
			}
			rest = rest[n:]
		}
	}()
	var got bytes.Buffer
	go func() {
		defer wg.Done()
		defer dstR.Close()
		buf := make([]byte, 256<<10)
		for {
			n, err := dstR.Read(buf)
			got.Write(buf[:n])
			delivered.Add(int64(bytes.Count(buf[:n], []byte("\n"))))
			if closeAfter > 0 && got.Len() >= closeAfter {
				return
			}
			if err != nil {
				return
			}
		}
	}()
	if !p.run(srcR, dstW) {
		t.Error("pump did not reach EOF")
	}
	dstW.Close()
	srcR.Close()
	wg.Wait()
	return got.Bytes()
}

func TestPumpZeroCopyIsByteExactAndRecordsFirst(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the zero-copy path is Linux's")
	}
	data := streamData(24 << 20)
	var delivered atomic.Int64
	sink := &flushOrderSink{delivered: &delivered}
	p := pump{stream: Stdout, sink: sink, splice: true}
	got := pipeRun(t, &p, data, 0, &delivered)
	if !bytes.Equal(got, data) {
		t.Fatalf("forwarded %d bytes, want %d, the same", len(got), len(data))
	}
	if rec := sink.joined(); !bytes.Equal(rec, data) {
		t.Fatalf("recorded %d bytes, want the %d forwarded", len(rec), len(data))
	}
	if len(sink.bad) > 0 {
		t.Fatalf("sink: %v", sink.bad[:min(len(sink.bad), 5)])
	}
	if p.splicedChunks == 0 {
		t.Fatal("no chunk took the zero-copy path")
	}
	if sink.early > 0 {
		t.Fatalf("%d chunks reached the other end before they were stored", sink.early)
	}
	t.Logf("%d chunks spliced, %d batches", p.splicedChunks, sink.batches)
}

func TestPumpZeroCopyRecordsOnWhenTheReaderLeaves(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the zero-copy path is Linux's")
	}
	data := streamData(8 << 20)
	var delivered atomic.Int64
	sink := &flushOrderSink{delivered: &delivered}
	p := pump{stream: Stdout, sink: sink, splice: true}
	got := pipeRun(t, &p, data, 1<<20, &delivered)
	if !bytes.HasPrefix(data, got) {
		t.Fatal("what was forwarded before the reader left is not the stream's start")
	}
	if rec := sink.joined(); !bytes.Equal(rec, data) {
		t.Fatalf("recorded %d bytes, want all %d: a gone reader stops delivery, not recording", len(rec), len(data))
	}
	var gone bool
	for _, e := range sink.events {
		gone = gone || e.Kind == EventGone
	}
	if !gone {
		t.Fatal("no EventGone after the reader closed its end")
	}
}

func TestPumpReadsFilesWithoutSplice(t *testing.T) {
	data := streamData(2 << 20)
	f, err := os.CreateTemp(t.TempDir(), "src")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dstR, dstW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&got, dstR)
	}()
	sink := &batchSink{}
	p := pump{stream: Stdin, sink: sink, splice: true}
	if !p.run(f, dstW) {
		t.Fatal("pump did not reach EOF")
	}
	dstW.Close()
	<-done
	if !bytes.Equal(got.Bytes(), data) || !bytes.Equal(sink.joined(), data) {
		t.Fatalf("forwarded %d, recorded %d bytes of %d", got.Len(), len(sink.joined()), len(data))
	}
	if p.splicedChunks != 0 {
		t.Fatalf("%d chunks spliced from a regular file", p.splicedChunks)
	}
}

// fileSink stores what it is handed as a recorder would, in bulk: the
// lines of a read are appended to a file at Flush, one write.
type fileSink struct {
	f     *os.File
	batch []byte
	bytes int64
}

func (s *fileSink) Line(l *Line) {
	s.batch = append(s.batch, l.Bytes...)
	s.bytes += int64(len(l.Bytes))
}
func (s *fileSink) Lines(_ Stream, block []byte, n int, _ time.Time) {
	s.batch = append(s.batch, block...)
	s.bytes += int64(len(block) - n)
}
func (s *fileSink) Event(Event) {}
func (s *fileSink) Flush() {
	s.f.Write(s.batch)
	s.batch = s.batch[:0]
}

// BenchmarkPumpPipes streams 1 KiB lines from a pipe through the pump to a
// pipe, with a writer and a reader on their own goroutines, read and
// written ("copy") or on the zero-copy path ("splice"), into a sink that
// only counts or into one that appends every line to a file ("file"). One
// op is 1 MiB. On a busy machine compare the CPU time of the two (for
// example with /usr/bin/time and -bench 'PumpPipes/copy$'), not MB/s.
func BenchmarkPumpPipes(b *testing.B) {
	for _, c := range []struct {
		name         string
		splice, file bool
	}{{"copy", false, false}, {"splice", true, false}, {"copy/file", false, true}, {"splice/file", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			block := bytes.Repeat(benchLine(1<<10), 1<<10)
			srcR, srcW, _ := os.Pipe()
			dstR, dstW, _ := os.Pipe()
			var sink Sink = &benchSink{}
			counted := func() int64 { return sink.(*benchSink).bytes }
			if c.file {
				f, err := os.Create(b.TempDir() + "/spool")
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				fs := &fileSink{f: f}
				sink, counted = fs, func() int64 { return fs.bytes }
			}
			p := pump{stream: Stdout, sink: sink, splice: c.splice}
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer srcW.Close()
				for range b.N {
					srcW.Write(block)
				}
			}()
			go func() {
				defer wg.Done()
				io.Copy(io.Discard, dstR)
			}()
			b.SetBytes(int64(len(block)))
			b.ResetTimer()
			p.run(srcR, dstW)
			dstW.Close()
			wg.Wait()
			b.StopTimer()
			srcR.Close()
			dstR.Close()
			if got := counted(); got != int64(b.N)*(1<<20-1<<10) {
				b.Fatalf("sink saw %d bytes", got)
			}
		})
	}
}

// TestRunZeroCopyThroughAChild streams through a real child (cat) with
// pipes on the host's side both ways, so that both directions can take the
// zero-copy path: what comes out is what went in, and the sink saw every
// line of both directions.
func TestRunZeroCopyThroughAChild(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat on PATH")
	}
	data := streamData(16 << 20)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		inW.Write(data)
		inW.Close()
	}()
	var got bytes.Buffer
	go func() {
		defer wg.Done()
		io.Copy(&got, outR)
		outR.Close()
	}()
	sink := &lockedSink{}
	res, err := Run(context.Background(), Config{Command: []string{"cat"}, Stdin: inR, Stdout: outW, Sink: sink})
	outW.Close()
	inR.Close()
	wg.Wait()
	if err != nil || res.Code != 0 {
		t.Fatalf("run: %v, code %d", err, res.Code)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("host got %d bytes, sent %d: not the same", got.Len(), len(data))
	}
	var in, out bytes.Buffer
	for _, l := range sink.lines {
		b := &in
		if l.Stream == Stdout {
			b = &out
		}
		b.Write(l.Bytes)
		if l.EOL {
			b.WriteByte('\n')
		}
	}
	if !bytes.Equal(in.Bytes(), data) || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("recorded %d bytes in, %d out, of %d", in.Len(), out.Len(), len(data))
	}
}

// pipeSize is F_GETPIPE_SZ of fd, or an error.
func pipeSize(fd uintptr) (int, error) {
	const fGetPipeSz = 1032
	n, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// TestZeroCopyPipesHoldARead: the zero-copy path's own pipes take a whole
// read buffer, so a chunk is a read's worth, not a default pipe's 64 KiB.
func TestZeroCopyPipesHoldARead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the zero-copy path is Linux's")
	}
	src, srcW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	defer srcW.Close()
	dstR, dst, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer dstR.Close()
	defer dst.Close()
	z := newZeroCopy(src, dst)
	if z == nil {
		t.Fatal("no zero-copy path between two pipes")
	}
	defer z.close()
	for _, fd := range []int{z.held[0], z.copied[0]} {
		n, err := pipeSize(uintptr(fd))
		if err != nil {
			t.Fatal(err)
		}
		if n < bufSize {
			t.Errorf("a zero-copy pipe holds %d bytes, want at least a read's %d", n, bufSize)
		}
	}
}

// TestRunGivesTheChildPipesThatHoldARead: the plugin's stdin and stdout
// pipes hold a read buffer's worth (the child, this test binary, reports
// their sizes), so a streaming plugin can write ahead while the relay
// records.
func TestRunGivesTheChildPipesThatHoldARead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pipe sizes are set on Linux only")
	}
	var out bytes.Buffer
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&out, outR)
	}()
	res, err := Run(context.Background(), Config{
		Command: []string{os.Args[0], "-test.run=^TestReportPipeSizes$"},
		Env:     append(os.Environ(), "PROXY_TEST_REPORT_PIPES=1"),
		Stdout:  outW,
	})
	outW.Close()
	<-done
	outR.Close()
	if err != nil || res.Code != 0 {
		t.Fatalf("run: %v, code %d; output %q", err, res.Code, out.String())
	}
	var in, stdout int
	if _, err := fmt.Sscanf(out.String(), "pipes %d %d", &in, &stdout); err != nil {
		t.Fatalf("child printed %q: %v", out.String(), err)
	}
	if in < bufSize || stdout < bufSize {
		t.Fatalf("the child's stdin pipe holds %d bytes and its stdout %d, want at least %d each", in, stdout, bufSize)
	}
}

// TestReportPipeSizes is the child of TestRunGivesTheChildPipesThatHoldARead:
// it prints the sizes of its stdin and stdout pipes.
func TestReportPipeSizes(t *testing.T) {
	if os.Getenv("PROXY_TEST_REPORT_PIPES") != "1" {
		t.Skip("the child of TestRunGivesTheChildPipesThatHoldARead")
	}
	in, err := pipeSize(0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pipeSize(1)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pipes %d %d\n", in, out)
	os.Exit(0)
}
