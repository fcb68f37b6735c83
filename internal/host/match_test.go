package host

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
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
// before found the calls used (skip, sameFrom), with the same params
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
			if from := int(p.skip["m"][0]); from != i {
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

// TestUnusedAtSkipsTheCallsUsed: over calls marked used at random, as a
// replay marks them (once used, used), unusedAt finds the first unused
// call at or after each place asked, as reading them one by one does; and
// once a run of calls is found used it is passed in one step: a plugin
// that skipped its first request and chose other ids had each match read
// every call used since (80,000 requests: 12.3 s).
func TestUnusedAtSkipsTheCallsUsed(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(36, 2))
	for round := range 200 {
		n := 1 + rng.IntN(80)
		p := requests(n, func(int) string { return `{}` })
		cs := p.calls["m"]
		for range 4 * n {
			if rng.IntN(2) == 0 {
				cs[rng.IntN(n)].used = true
				continue
			}
			i := rng.IntN(n + 1)
			want := i
			for want < n && cs[want].used {
				want++
			}
			if got := p.unusedAt("m", i); got != want {
				t.Fatalf("round %d: unusedAt(%d) = %d, want %d", round, i, got, want)
			}
		}
	}
	// The first call never used, every later one used in turn, each
	// match looking past the first: each look passes the calls used
	// before in one step.
	p := requests(1000, func(int) string { return `{}` })
	cs := p.calls["m"]
	for k := 1; k < 1000; k++ {
		cs[k].used = true
		if got := p.unusedAt("m", 1); got != k+1 {
			t.Fatalf("after %d calls used: unusedAt(1) = %d, want %d", k, got, k+1)
		}
		if hint := p.skip["m"][1]; int(hint) != k+1 {
			t.Fatalf("after %d calls used: the hint at 1 is %d, want %d: the next look reads them again", k, hint, k+1)
		}
	}
}

// TestAScriptsAnswersByIDGoInTurn: a host script that answers one id many
// times gives its answers in order, each look starting past those given
// (a plugin that reused id 1 for 80,000 requests: each read the answers
// given before it, 10.6 s).
func TestAScriptsAnswersByIDGoInTurn(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for k := range 100 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":1,"result":%d}`+"\n", k)
	}
	s, err := ReadScript(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	p := s.plan.fresh()
	for k := range 100 {
		c, _ := p.match(json.RawMessage(`1`), "get", nil, nil)
		if c == nil || !strings.HasSuffix(string(c.answer.Raw), fmt.Sprintf(`"result":%d}`, k)) {
			t.Fatalf("request %d answered from %+v, want the script's answer %d", k, c, k)
		}
		if from := p.idFrom["1"]; from != k {
			t.Fatalf("request %d: the look started at answer %d, want %d", k, from, k)
		}
	}
	if c, _ := p.match(json.RawMessage(`1`), "get", nil, nil); c != nil {
		t.Errorf("a request past the script's answers answered from %+v", c)
	}
}

// TestLastAnsweredIsLookedForOnce: chatter the plugin says more of than
// recorded gets the last recorded answer of its method, looked for once
// however many ask (a recording of 80,000 such requests, the first alone
// answered, looked back over the rest at each: 22 s).
func TestLastAnsweredIsLookedForOnce(t *testing.T) {
	t.Parallel()
	lines := []string{`< {"jsonrpc":"2.0","id":0,"method":"progress/create","params":{}}`, `> {"jsonrpc":"2.0","id":0,"result":null}`}
	for k := 1; k < 50; k++ {
		lines = append(lines, fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"method":"progress/create","params":{}}`, k))
	}
	p := makePlan(tl(lines...), Reading{}).fresh()
	first := p.lastAnswered("progress/create")
	if first == nil || first.seq != 1 {
		t.Fatalf("the last answered call: %+v, want recorded seq 1's", first)
	}
	p.calls["progress/create"] = nil // a second look would find none
	if again := p.lastAnswered("progress/create"); again != first {
		t.Errorf("asked again: %+v, want the first look's", again)
	}
	if none := p.lastAnswered("other"); none != nil {
		t.Errorf("a method never answered: %+v", none)
	}
}
