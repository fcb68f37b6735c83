package present

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

func TestListCapsWithACount(t *testing.T) {
	for _, c := range []struct {
		items []string
		more  int
		want  string
	}{
		{[]string{"a", "b"}, 0, "a, b"},
		{[]string{"a"}, 249990, "a, … and 249,990 more"},
		{nil, 0, ""},
	} {
		if got := List(c.items, c.more); got != c.want {
			t.Errorf("List(%q, %d) = %q, want %q", c.items, c.more, got, c.want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45000: "-45,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTimelinePendingStaysBounded: show of 20,000 plugin requests never
// answered, each with an id and a method of its own 2 kB long. What the
// timeline remembers to pair an answer is bounded in number and bytes (a
// 641 MB tape of such lines had held 285 MB), and an answer to a request
// still remembered is still paired with it.
func TestTimelinePendingStaysBounded(t *testing.T) {
	if race.Enabled {
		t.Skip("measures the heap, which the race detector multiplies; the plain run measures it")
	}
	tl := NewTimeline(io.Discard, TimelineOptions{})
	pad := strings.Repeat("m", 2000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 20000 {
		raw := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"%d%s","method":"%d%s","params":{}}`, i, pad, i, pad)
		if err := tl.Frame(&frame.Frame{Seq: uint64(i + 1), At: int64(i), Dir: frame.Out, Raw: raw}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Errorf("20,000 unanswered requests of 4 kB grew the heap %.1f MiB, want under 16 MiB", float64(grew)/(1<<20))
	}
	tl.derive(&frame.Frame{Seq: 20001, At: 1e9, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","id":7,"method":"x/get"}`)})
	if r := tl.derive(&frame.Frame{Seq: 20002, At: 3e9, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)}); r.req == nil || r.req.seq != 20001 || r.method != "x/get" {
		t.Errorf("the answer to a remembered request is not paired with it: %+v", r.req)
	}
	runtime.KeepAlive(tl)
}
