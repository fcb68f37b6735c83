package recorder

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/relay"
)

func benchRecorder(b *testing.B) *Recorder {
	b.Helper()
	started := time.Now()
	meta := &frame.Session{
		ID:      frame.NewID(started),
		Command: []string{"plugin", "--stdio"},
		Cwd:     "/tmp",
		Started: started,
		Status:  frame.StatusRecording,
	}
	path := filepath.Join(b.TempDir(), meta.ID+".spool")
	r, err := Start(path, meta, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Spool().Close() })
	return r
}

// BenchmarkLine is the cost of recording one line into a real spool in
// b.TempDir(): a frame header, a CRC-32C and, with the Flush the proxy
// calls after each read, one write(2) per line (the worst case: a read
// that completes many lines writes them all at once). One op is one line.
// Lines alternate stdin and stdout as in a request/response session.
func BenchmarkLine(b *testing.B) {
	for _, size := range []int{200, 1 << 20, 16 << 20} {
		b.Run(benchSize(size), func(b *testing.B) {
			r := benchRecorder(b)
			raw := make([]byte, size)
			for i := range raw {
				raw[i] = 'a' + byte(i%26)
			}
			lines := [2]relay.Line{
				{Stream: relay.Stdin, Bytes: raw, Done: true, EOL: true},
				{Stream: relay.Stdout, Bytes: raw, Done: true, EOL: true},
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Line(&lines[i&1])
				r.Flush()
			}
			b.StopTimer()
			if l := r.Lost(); l != nil {
				b.Fatalf("lost: %+v", *l)
			}
		})
	}
}

func benchSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkBatch is the cost of recording a streaming plugin's output: the
// lines of one 64 KiB read handed over and flushed together, as the proxy
// does (the first alone, the rest at once: one record). One op is one line.
func BenchmarkBatch(b *testing.B) {
	for _, size := range []int{200, 1 << 10} {
		b.Run(benchSize(size), func(b *testing.B) {
			r := benchRecorder(b)
			perRead := (64 << 10) / size
			read := make([]byte, perRead*size)
			for i := range read {
				read[i] = 'a' + byte(i%26)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := i % perRead
				switch {
				case k == 0:
					// The proxy hands the first line of a read on its own,
					// then the others at once.
					r.Line(&relay.Line{Stream: relay.Stdout, Bytes: read[:size-1], Done: true, EOL: true})
				case k == 1:
					n := min(perRead-1, b.N-i)
					r.Lines(relay.Stdout, read[size:(n+1)*size], n, time.Time{})
					i += n - 1
					r.Flush()
				}
			}
			r.Flush()
			b.StopTimer()
			if l := r.Lost(); l != nil {
				b.Fatalf("lost: %+v", *l)
			}
		})
	}
}
