package tape

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// BenchmarkReader reads a 10,000-frame tape of JSON-RPC lines, stderr
// text and a closing event, one frame at a time as Next gives them.
func BenchmarkReader(b *testing.B) {
	frames := make([]frame.Frame, 0, 10001)
	for i := range 10000 {
		f := frame.Frame{Seq: uint64(i + 1), At: int64(i) * 1000}
		switch i % 4 {
		case 0:
			f.Dir, f.Raw = frame.In, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello %d"}}}`, i, i)
		case 1, 2:
			f.Dir, f.Raw = frame.Out, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hello %d"}]}}`, i, i)
		default:
			f.Dir, f.Raw = frame.Err, fmt.Appendf(nil, "log line %d\r", i)
		}
		frames = append(frames, f)
	}
	frames = append(frames, frame.Frame{Seq: 10001, At: 10000 * 1000, Event: frame.EventEOF, Dir: frame.In})
	data := export(b, testSession(), frames)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Each(func(*frame.Frame) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
