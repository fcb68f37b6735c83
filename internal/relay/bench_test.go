package relay

import (
	"fmt"
	"io"
	"testing"
)

// benchSink is the cheapest Sink that still looks at every line, so the
// benchmarks measure the pump and nothing behind it.
type benchSink struct {
	lines int64
	bytes int64
}

func (s *benchSink) Line(l *Line) {
	if l.Done {
		s.lines++
	}
	s.bytes += int64(len(l.Bytes))
}
func (s *benchSink) Event(Event) {}

// benchLines is a reader that yields count copies of line (which ends in
// "\n"), perRead bytes at most per Read, and then io.EOF. A Read never
// returns part of a line when whole lines fit (as a writer that writes one
// line per write(2) is seen through a pipe), and streams a line longer than
// perRead in perRead pieces.
type benchLines struct {
	line    []byte
	count   int64
	perRead int
	off     int // offset into the current line
}

func (r *benchLines) Read(p []byte) (int, error) {
	if r.count == 0 {
		return 0, io.EOF
	}
	lim := min(len(p), r.perRead)
	n := 0
	for r.count > 0 && n < lim {
		rest := r.line[r.off:]
		if r.off == 0 && len(rest) > lim-n && n > 0 {
			break // the next line does not fit whole: leave it for the next Read
		}
		c := copy(p[n:lim], rest)
		n += c
		r.off += c
		if r.off == len(r.line) {
			r.off = 0
			r.count--
		}
	}
	return n, nil
}

func benchLine(size int) []byte {
	line := make([]byte, size)
	for i := range line[:size-1] {
		line[i] = 'a' + byte(i%26)
	}
	line[size-1] = '\n'
	return line
}

// BenchmarkPumpLine is the pump's cost per 200-byte line (199 bytes and its
// "\n"): one op is one line. "per-read" hands the pump one line per Read, as
// an interactive plugin that writes a line and waits does; "batched" fills
// the read buffer (bufSize) with whole lines, as a plugin streaming output does.
func BenchmarkPumpLine(b *testing.B) {
	for _, c := range []struct {
		name    string
		perRead int
	}{
		{"200B/per-read", 200},
		{"200B/batched", bufSize},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := benchLine(200)
			sink := &benchSink{}
			p := pump{stream: Stdout, sink: sink}
			src := &benchLines{line: line, count: int64(b.N), perRead: c.perRead}
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			b.ResetTimer()
			if !p.run(src, io.Discard) {
				b.Fatal("pump did not reach EOF")
			}
			b.StopTimer()
			if sink.lines != int64(b.N) {
				b.Fatalf("sink saw %d lines, want %d", sink.lines, b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/line")
		})
	}
}

// BenchmarkPumpThroughput streams lines of 1 KiB, 1 MiB and 16 MiB (with
// their "\n") through the pump, a read buffer (bufSize) per Read as a full pipe delivers them; one
// op is one line. A long line reaches the sink in pieces, straight from the
// read buffer, so B/op stays flat.
func BenchmarkPumpThroughput(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20, 16 << 20} {
		b.Run(benchSizeName(size), func(b *testing.B) {
			line := benchLine(size)
			sink := &benchSink{}
			p := pump{stream: Stdout, sink: sink}
			src := &benchLines{line: line, count: int64(b.N), perRead: bufSize}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			if !p.run(src, io.Discard) {
				b.Fatal("pump did not reach EOF")
			}
			b.StopTimer()
			if sink.lines != int64(b.N) || sink.bytes != int64(b.N)*int64(size-1) {
				b.Fatalf("sink saw %d lines / %d bytes, want %d / %d", sink.lines, sink.bytes, b.N, int64(b.N)*int64(size-1))
			}
		})
	}
}

func benchSizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
