package check

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// TestKeptCountsAllAndKeepsABound: a finding in every frame is counted
// whole, but only MaxKept (within MaxKeptBytes) are kept, and what was let
// go is said by rule.
func TestKeptCountsAllAndKeepsABound(t *testing.T) {
	t.Parallel()
	var k Kept
	for i := range MaxKept + 500 {
		k.Add(Finding{Level: Error, Rule: RuleMethodUnknown, Seq: uint64(MaxKept + 500 - i), Method: "x/y"})
	}
	k.Add(Finding{Level: Warning, Rule: RuleBadgeLength, Seq: 1})
	if len(k.Findings) != MaxKept || k.Levels[Error] != MaxKept+500 || k.Levels[Warning] != 1 {
		t.Errorf("kept %d, counted %d errors and %d warnings; want %d kept, %d and 1", len(k.Findings), k.Levels[Error], k.Levels[Warning], MaxKept, MaxKept+500)
	}
	if got, want := k.Cut(), fmt.Sprintf("findings not shown: 501 (method-unknown 500, badge-length 1); the first %d are kept", MaxKept); got != want {
		t.Errorf("Cut() = %q, want %q", got, want)
	}
	s := k.Sorted()
	for i := 1; i < len(s); i++ {
		if s[i-1].Seq > s[i].Seq {
			t.Fatalf("Sorted: seq %d before %d", s[i-1].Seq, s[i].Seq)
		}
	}

	// Long findings are bounded by their bytes.
	var long Kept
	msg := strings.Repeat("m", 4000)
	for range 5000 {
		long.Add(Finding{Level: Error, Rule: RuleMethodUnknown, Message: msg})
	}
	if n := len(long.Findings); n == 0 || n*4000 > MaxKeptBytes || long.Levels[Error] != 5000 {
		t.Errorf("5,000 findings of 4 kB: kept %d (%d bytes), counted %d; want at most %d bytes kept, all counted", n, n*4000, long.Levels[Error], MaxKeptBytes)
	}
	var none Kept
	if none.Cut() != "" || len(none.Sorted()) != 0 {
		t.Error("no findings: a Cut or findings")
	}
}

// TestUnansweredLongMethodsStayBounded: 20,000 plugin requests that the
// host never answers, each naming a method of its own 2 kB long. What
// check keeps to follow them is bounded: before, every method whole (about
// 40 MB here; 213 MB for 100,000).
func TestUnansweredLongMethodsStayBounded(t *testing.T) {
	if race.Enabled {
		t.Skip("measures the heap, which the race detector multiplies; the plain run measures it")
	}
	ck := New(Options{})
	pad := strings.Repeat("m", 2000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var k Kept
	for i := range 20000 {
		raw := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"p%d","method":"%s/%d","params":{}}`, i, pad, i)
		k.Add(ck.Feed(&frame.Frame{Seq: uint64(i + 1), At: int64(i) * 5e6, Dir: frame.Out, Raw: raw})...)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ck)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Errorf("20,000 unanswered requests with 2 kB methods grew the heap %.1f MiB, want under 16 MiB", float64(grew)/(1<<20))
	}
	if k.Levels[Error] != 20000 {
		t.Errorf("%d errors, want one a request (method-unknown)", k.Levels[Error])
	}
}
