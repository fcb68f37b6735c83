package host

import (
	"encoding/json"
	"fmt"
	"testing"
)

// requests is a recording of n requests of method m the plugin made, each
// with the params params(i), and the host's answers.
func requests(n int, params func(i int) string) *plan {
	lines := make([]string, 0, 2*n)
	for i := range n {
		lines = append(lines, fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"method":"m","params":%s}`, i, params(i)))
	}
	for i := range n {
		lines = append(lines, fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"result":%d}`, i, i))
	}
	return makePlan(tl(lines...), Reading{})
}

// TestMatchTakesTheFirstUnusedCallWithTheseParams: a live request is
// answered from the first unused call of its method with equal params,
// else from the first unused one (its params differ), until none is left;
// a request that is a recorded line byte for byte goes by that line's
// params.
func TestMatchTakesTheFirstUnusedCallWithTheseParams(t *testing.T) {
	t.Parallel()
	p := requests(4, func(i int) string { return fmt.Sprintf(`{"n":%d}`, []int{1, 2, 1, 3}[i]) })
	id := json.RawMessage(`7`)
	for _, c := range []struct {
		params  string
		known   *expected
		seq     uint64 // of the call answered, 0: none
		differs bool
	}{
		{`{"n":2}`, nil, 2, false},
		{`{ "n" : 1 }`, nil, 1, false}, // equal as JSON
		{`{"n":9}`, nil, 3, true},      // none equal: the first unused
		{`{"n":1}`, &p.expect[0], 4, true},
		{`{"n":1}`, nil, 0, false},
	} {
		got, differs := p.match(id, "m", json.RawMessage(c.params), c.known)
		var seq uint64
		if got != nil {
			seq = got.seq
		}
		if seq != c.seq || differs != c.differs {
			t.Errorf("match(%s): the call of recorded seq %d (params differ: %v), want %d (%v)", c.params, seq, differs, c.seq, c.differs)
		}
	}
}

// matchCase is a recording's requests of one method, by the params of
// each, and the params of the live requests answered from them in order.
type matchCase struct {
	name   string
	params func(i int) string
	live   string
}

// inOrder are the cases of in-order matching: every request with the same
// params, and live params that match none.
func inOrder() []matchCase {
	return []matchCase{
		{"equal params", func(int) string { return `{}` }, `{}`},
		{"params that match none", func(i int) string { return fmt.Sprintf(`{"n":%d}`, i) }, `{"n":-1}`},
	}
}

// TestMatchLooksPastTheCallsUsed: answering the plugin's requests of
// one method in their recorded order, each match starts where the one
// before found the calls used (unusedFrom, sameFrom), with the same params
// in every one and with params that match none: the work is in step with
// the requests. Before, each match looked at every call before it, and a
// replay of 160,000 such requests fell behind the plugin and gave up its
// waits for 105,708 of them (BenchmarkMatch measures it).
func TestMatchLooksPastTheCallsUsed(t *testing.T) {
	t.Parallel()
	for _, c := range inOrder() {
		p := requests(1000, c.params)
		for i := range 1000 {
			if got, _ := p.match(json.RawMessage(`1`), "m", json.RawMessage(c.live), nil); got == nil || got.seq != uint64(i+1) {
				t.Fatalf("%s: request %d answered from %+v, want the call of recorded seq %d", c.name, i, got, i+1)
			}
			if from := p.unusedFrom["m"]; from != i {
				t.Fatalf("%s: match %d started at call %d, want %d: the calls before it were found used before", c.name, i, from, i)
			}
		}
		if from := p.sameFrom[sameKey("m", paramsKey(json.RawMessage(c.live)))]; c.live == `{}` && from != 999 {
			t.Errorf("%s: the last match of equal params started at its call %d, want 999", c.name, from)
		}
	}
}

// BenchmarkMatch: the plugin's 40,000 requests of one method answered in
// their recorded order (before the calls were indexed: 10 s for equal
// params, 23 s for params that match none; after: 20 to 60 ms).
func BenchmarkMatch(b *testing.B) {
	for _, c := range inOrder() {
		b.Run(c.name, func(b *testing.B) {
			recorded := requests(40000, c.params)
			for b.Loop() {
				b.StopTimer()
				p := recorded.fresh()
				b.StartTimer()
				for range 40000 {
					p.match(json.RawMessage(`1`), "m", json.RawMessage(c.live), nil)
				}
			}
		})
	}
}
