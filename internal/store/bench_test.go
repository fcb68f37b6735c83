package store

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/spool"
)

const benchSpoolFrames = 10_000

// benchFrames returns n line frames of about 200 bytes alternating stdin and
// stdout, the first being the host's initialize request, as a plugin session
// has them.
func benchFrames(n int) []frame.Frame {
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.0.0"},"plugin":{"id":"bench","name":"Bench","version":"0.1"}}}`)
	frames := make([]frame.Frame, n)
	for i := range frames {
		raw := init
		if i > 0 {
			raw = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"items":[%q]}}`, i, fmt.Sprintf("%0150d", i))
		}
		frames[i] = frame.Frame{
			Seq: uint64(i + 1),
			At:  int64(i) * int64(50*time.Microsecond),
			Dir: frame.Dir(1 + i%2),
			Raw: raw,
		}
	}
	return frames
}

// benchSpool writes a finished spool of frames for a new session into st, as
// the recorder would, and returns its writer (still holding the lock).
func benchSpool(b *testing.B, st *Store, frames []frame.Frame) *spool.Writer {
	b.Helper()
	started := time.Now()
	meta := &frame.Session{ID: frame.NewID(started), Command: []string{"plugin", "--stdio"}, Cwd: "/tmp", Started: started, Status: frame.StatusRecording}
	js, err := json.Marshal(meta)
	if err != nil {
		b.Fatal(err)
	}
	w, err := spool.Create(st.SpoolPath(meta.ID), js)
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	for i := range frames {
		buf = frame.Append(buf[:0], &frames[i])
		if err := w.AddFrame(buf, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	code := 0
	end, err := json.Marshal(frame.End{Ended: started.Add(time.Second), Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.AppendEnd(end); err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkIngest loads a finished spool of 10,000 frames of ≈ 200 bytes into
// a fresh store (database created by the first ingest, with the default
// fsync on every commit). One op is one whole spool; ns/frame is the cost per
// frame. Writing the spool is not timed.
func BenchmarkIngest(b *testing.B) {
	frames := benchFrames(benchSpoolFrames)
	var size int64
	for i := range frames {
		size += int64(len(frames[i].Raw))
	}
	b.Run(fmt.Sprintf("%dframes", benchSpoolFrames), func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		root := b.TempDir()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := filepath.Join(root, fmt.Sprint(i))
			st, err := Open(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			w := benchSpool(b, st, frames)
			b.StartTimer()
			if err := st.Ingest(w.Path(), 0, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			w.Close()
			if err := os.RemoveAll(dir); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSpoolFrames), "ns/frame")
	})
}

// benchSliceSource yields frames from a slice.
func benchSliceSource(frames []frame.Frame) FrameSource {
	i := 0
	return func() (*frame.Frame, error) {
		if i == len(frames) {
			return nil, io.EOF
		}
		i++
		return &frames[i-1], nil
	}
}

// BenchmarkSessions lists a store holding 10,000 small sessions (four frames
// each, stored with Put). The store is built once, untimed; one op is one
// Sessions() call, so ns/op is ns per listing.
func BenchmarkSessions(b *testing.B) {
	const n = 10_000
	st, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	frames := benchFrames(4)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	built := time.Now()
	for i := range n {
		started := base.Add(time.Duration(i) * time.Minute)
		ended := started.Add(time.Second)
		code := 0
		meta := frame.Session{
			ID:       frame.NewID(started),
			Name:     fmt.Sprintf("session-%d", i),
			Command:  []string{"plugin", "--stdio"},
			Cwd:      "/home/user/project",
			Started:  started,
			Ended:    &ended,
			Status:   frame.StatusComplete,
			Exit:     frame.Exit{Code: &code},
			Tapedeck: "bench",
		}
		if err := st.Put(meta, benchSliceSource(frames)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built a store of %d sessions with Put in %v (%v per Put)", n, time.Since(built).Round(time.Millisecond), (time.Since(built) / n).Round(time.Microsecond))
	b.Run(fmt.Sprintf("%dsessions", n), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			list, err := st.List(nil)
			if err != nil {
				b.Fatal(err)
			}
			if len(list) != n {
				b.Fatalf("listed %d sessions, want %d", len(list), n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/session")
	})
}
