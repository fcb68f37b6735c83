package htmlreport

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// tinyFrames is Frames over n tiny frames made on the fly (requests and
// their answers, alternating), one buffer reused: no frame outlives its
// call. last, when set, is called at the last frame of each pass.
func tinyFrames(n int, last func()) Frames {
	return func(fn func(*frame.Frame) error) error {
		var raw []byte
		for i := 1; i <= n; i++ {
			f := frame.Frame{Seq: uint64(i), At: int64(i) * 1000}
			if i%2 == 1 {
				f.Dir, raw = frame.Out, fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":%d,"method":"ui/setBadge","params":{"text":"%d"}}`, i, i%100)
			} else {
				f.Dir, raw = frame.In, fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":%d,"result":null}`, i-1)
			}
			f.Raw = raw
			if i == n && last != nil {
				last()
			}
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
}

// heapAfterGC is the live heap, in bytes, once the garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSessionReportStreams: the report of a session used to hold every
// frame, every timeline entry and the whole page's data at once (1.76 GB
// for a million tiny frames). Now it holds one frame at a time and four
// bytes per frame: with 100,000 frames, the live heap at the last frame
// stays within a few MB of where it started (the timeline alone was
// about 20 MB).
func TestSessionReportStreams(t *testing.T) {
	const n = 100_000
	base := heapAfterGC()
	var peak uint64
	err := Session(io.Discard, &frame.Session{ID: "01stream"}, tinyFrames(n, func() { peak = max(peak, heapAfterGC()) }), []Finding{{Seq: n, Level: "info", Rule: "r", Message: "last"}})
	if err != nil {
		t.Fatal(err)
	}
	if grew := int64(peak) - int64(base); grew > 4<<20 {
		t.Errorf("the report of %d frames holds %d MB", n, grew>>20)
	}
}

// BenchmarkSessionReport writes the report of 1,000,000 and 5,000,000 tiny
// frames (the audit's sizes: 1.76 GB and 10 GB before it streamed) and
// reports the live heap at the last frame.
func BenchmarkSessionReport(b *testing.B) {
	for _, n := range []int{1_000_000, 5_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				base := heapAfterGC()
				err := Session(io.Discard, &frame.Session{ID: "01bench"}, tinyFrames(n, func() { peak = max(peak, heapAfterGC()-base) }), nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "live-MB")
		})
	}
}
