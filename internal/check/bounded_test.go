package check

// Tests that hostile sessions cost check bounded time and memory: tables
// that stay within their caps, and memory that does not grow with what a
// frame carries beside what check keeps of it.

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// feeder feeds frames to rules in seq order and gathers the findings.
type feeder struct {
	rules ruleSet
	seq   uint64
	out   []Finding
}

func (f *feeder) feed(d frame.Dir, raw string) []Finding {
	f.seq++
	got := f.rules.Feed(&frame.Frame{Seq: f.seq, At: int64(f.seq), Dir: d, Raw: []byte(raw)})
	f.out = append(f.out, got...)
	return got
}

// count is how many of fs are of rule.
func count(fs []Finding, rule string) int {
	n := 0
	for _, f := range fs {
		if f.Rule == rule {
			n++
		}
	}
	return n
}

// heapGrowth is how much the live heap grew while fn ran, after a GC on
// either side; keep is kept alive until the second one.
func heapGrowth(fn func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := fn()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// mcpSession returns the MCP rules past the handshake of a server with
// tools.
func mcpSession() *feeder {
	f := &feeder{rules: newMCP(Options{})}
	f.feed(frame.In, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	f.feed(frame.Out, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
	f.feed(frame.In, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return f
}

// TestRunningCount: the count of running timers kept as requests come,
// are answered and have their ids reused (the new request takes the old
// one's place) is the count of live requests in
// the table, and gives timer-too-many where a scan of the table did.
func TestRunningCount(t *testing.T) {
	c := newAgentty(Options{APIVersion: 2})
	f := &feeder{rules: c}
	timer := func(id int) []Finding {
		return f.feed(frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"host/timer","params":{"ms":10}}`, id))
	}
	steps := []struct {
		what string
		do   func() []Finding
		want int // timer-too-many findings
	}{
		{"eight timers", func() []Finding {
			var out []Finding
			for id := 1; id <= maxTimers; id++ {
				out = append(out, timer(id)...)
			}
			return out
		}, 0},
		{"a ninth", func() []Finding { return timer(9) }, 1},
		{"the host answers #1", func() []Finding {
			return f.feed(frame.In, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}, 0},
		{"id 2 reused while it runs", func() []Finding { return timer(2) }, 0},
		{"a fetch", func() []Finding {
			return f.feed(frame.Out, `{"jsonrpc":"2.0","id":50,"method":"net/fetch","params":{"url":"https://x/"}}`)
		}, 0},
		{"the host answers #2 and #3", func() []Finding {
			return append(f.feed(frame.In, `{"jsonrpc":"2.0","id":2,"result":{}}`),
				f.feed(frame.In, `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`)...)
		}, 0},
		{"a tenth", func() []Finding { return timer(10) }, 0},
	}
	for _, s := range steps {
		if got := count(s.do(), RuleTimerTooMany); got != s.want {
			t.Errorf("%s: %d timer-too-many findings, want %d", s.what, got, s.want)
		}
		scan := map[string]int{}
		for _, p := range c.pluginCalls {
			if p.live {
				scan[p.method]++
			}
		}
		for _, m := range []string{"host/timer", "net/fetch"} {
			if c.live[m] != scan[m] {
				t.Errorf("%s: live[%s] = %d, want %d (the table's)", s.what, m, c.live[m], scan[m])
			}
		}
	}
	if got, want := c.live["host/timer"], 7; got != want {
		t.Errorf("timers running at the end = %d, want %d", got, want)
	}
}

// idTree is a UI tree nesting depth elements, each with its own id and
// holding the next under a member named key.
func idTree(depth int, key string) string {
	var b strings.Builder
	for i := range depth {
		fmt.Fprintf(&b, `{"type":"column","id":"e%d","%s":`, i, key)
	}
	b.WriteString(`{"type":"text","text":"x"}`)
	b.WriteString(strings.Repeat("}", depth))
	return b.String()
}

// TestTreeIDsCostLinear: a tree of 300 elements nested under member names
// of 1,000 bytes, each with an id, is walked allocating far less than the
// 250 MB that spelling every id's path took; a duplicate id's report still
// spells where the first one is.
func TestTreeIDsCostLinear(t *testing.T) {
	key := strings.Repeat("k", 1000)
	v, err := parseDoc([]byte(idTree(300, key)))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	issues, depth := treeIssues(v, "params.tree")
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Errorf("the walk allocated %d KB, want at most 2 MB", got>>10)
	}
	if depth != 300 || count(asFindings(issues), RuleUITooDeep) != 1 {
		t.Errorf("depth %d, issues %v; want 300 and one ui-too-deep", depth, issues)
	}

	dup := `{"type":"column","id":"a","children":[{"type":"row","id":"b","a b":{"type":"text","id":"a","text":"x"}},` +
		`{"type":"list","items":[{"id":"i","label":"x"},{"id":"i","label":"y"}]}]}`
	v, err = parseDoc([]byte(dup))
	if err != nil {
		t.Fatal(err)
	}
	issues, _ = treeIssues(v, "params.tree")
	want := []issue{
		{RuleUIDuplicateID, `params.tree.children[0]["a b"]`, `id "a" is also the id of the element at params.tree`},
		{RuleUIDuplicateID, `params.tree.children[1].items[1]`, `id "i" is also the id of params.tree.children[1].items[0]`},
	}
	if fmt.Sprint(issues) != fmt.Sprint(want) {
		t.Errorf("issues of a tree with duplicate ids:\n got %v\nwant %v", issues, want)
	}
}

// asFindings makes findings of issues, for count.
func asFindings(issues []issue) []Finding {
	out := make([]Finding, len(issues))
	for i, is := range issues {
		out[i] = Finding{Rule: is.rule, Path: is.path}
	}
	return out
}

// TestKeptParamsAreCopied: a request in flight keeps a copy of its params,
// not the line they are a slice of: 200 requests with small params beside
// a 100 KB member hold well under the 20 MB their lines take.
func TestKeptParamsAreCopied(t *testing.T) {
	if race.Enabled {
		t.Skip("measures the heap, which the race detector multiplies")
	}
	pad := strings.Repeat("x", 100<<10)
	var r *rpc
	grown := heapGrowth(func() any {
		r = newJSONRPC(Options{})
		f := &feeder{rules: r}
		for i := range 200 {
			f.feed(frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m","params":{"a":1},"pad":"%s"}`, i+1, pad))
		}
		return r
	})
	if grown > 2<<20 {
		t.Errorf("200 requests in flight hold %d KB, want at most 2 MB", grown>>10)
	}
	if got := string(r.calls[hostSide]["7"].params); got != `{"a":1}` {
		t.Errorf("the params kept = %s, want {\"a\":1}", got)
	}
}

// TestProgressTokensBounded: progress tokens of 100 KB are kept by a hash
// (300 of them hold well under the 30 MB they spell), still pair with the
// progress that names them, and past maxTracked tokens a side's table
// takes no more and its unknown tokens are not reported.
func TestProgressTokensBounded(t *testing.T) {
	if race.Enabled {
		t.Skip("measures the heap, which the race detector multiplies")
	}
	long := strings.Repeat("t", 100<<10)
	ping := func(id int, tok string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"_meta":{"progressToken":"%s"}}}`, id, tok)
	}
	progress := func(tok string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"%s","progress":1}}`, tok)
	}
	var f *feeder
	grown := heapGrowth(func() any {
		f = mcpSession()
		for i := range 300 {
			f.feed(frame.In, ping(i+1, fmt.Sprint(i, long)))
		}
		return f
	})
	if grown > 4<<20 {
		t.Errorf("300 requests with 100 KB progress tokens hold %d KB, want at most 4 MB", grown>>10)
	}
	m := f.rules.(*mcp)
	if got := count(f.feed(frame.Out, progress(fmt.Sprint(7, long))), RuleProgressTokenUnknown); got != 0 {
		t.Errorf("progress naming a long token in flight: %d progress-token-unknown, want 0", got)
	}
	f.feed(frame.Out, `{"jsonrpc":"2.0","id":8,"result":{}}`)
	fs := f.feed(frame.Out, progress(fmt.Sprint(7, long)))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "whose request was answered at #") {
		t.Errorf("progress naming a long token answered: %v, want one progress-token-unknown saying when it was answered", fs)
	} else if len(fs[0].Message) > 200 {
		t.Errorf("the finding names a long token whole (%d bytes), not by its hash as a long id is", len(fs[0].Message))
	}

	for i := len(m.tokens[hostSide]); i < maxTracked; i++ {
		m.tokens[hostSide][fmt.Sprint("filler", i)] = &rpcCall{}
	}
	f.feed(frame.In, ping(100000, "one-more"))
	if got := len(m.tokens[hostSide]); got != maxTracked {
		t.Errorf("the token table holds %d tokens, want maxTracked (%d)", got, maxTracked)
	}
	if got := count(f.feed(frame.Out, progress("one-more")), RuleProgressTokenUnknown); got != 0 {
		t.Errorf("progress naming a token the full table did not take: %d progress-token-unknown, want 0", got)
	}
}

// toolsPage is the server's answer to tools/list request id: n tools
// named with prefix, and a next cursor when more is set.
func toolsPage(id, n int, prefix string, more bool) string {
	tools := make([]string, n)
	for j := range tools {
		tools[j] = fmt.Sprintf(`{"name":"%s%d","inputSchema":{"type":"object"}}`, prefix, j)
	}
	next := ""
	if more {
		next = fmt.Sprintf(`,"nextCursor":"c%d"`, id+1)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]%s}}`, id, strings.Join(tools, ","), next)
}

// TestToolListingBounded: tools/list pages that never stop sending
// nextCursor gather at most maxListedTools names; past them the tools are
// unknown, so a call of a tool none of them named gives no finding, until
// a tools/list without a cursor starts over.
func TestToolListingBounded(t *testing.T) {
	f := mcpSession()
	m := f.rules.(*mcp)
	const perPage = 1000
	id := 0
	for range maxListedTools/perPage + 3 {
		id++
		f.feed(frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"cursor":"c%d"}}`, id, id))
		f.feed(frame.Out, toolsPage(id, perPage, fmt.Sprintf("p%d-", id), true))
		if len(m.listing) > maxListedTools {
			t.Fatalf("after %d pages the listing holds %d names, want at most %d", id, len(m.listing), maxListedTools)
		}
	}
	id++
	f.feed(frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"cursor":"c%d"}}`, id, id))
	f.feed(frame.Out, toolsPage(id, 1, "last", false))
	call := func(name string) []Finding {
		id++
		f.feed(frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, name))
		return f.feed(frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[],"isError":true}}`, id))
	}
	if m.tools != nil {
		t.Errorf("the tools after an overlong listing: %d known, want unknown", len(m.tools))
	}
	if got := count(call("never-listed"), RuleToolErrorAsResult); got != 0 {
		t.Errorf("a call of a tool past an overlong listing: %d tool-error-as-result, want 0", got)
	}

	id++
	f.feed(frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
	f.feed(frame.Out, toolsPage(id, 2, "t", false))
	if got := count(call("never-listed"), RuleToolErrorAsResult); got != 1 {
		t.Errorf("a call of a tool the fresh listing did not name: %d tool-error-as-result, want 1", got)
	}
	if got := count(call("t1"), RuleToolErrorAsResult); got != 0 {
		t.Errorf("a call of a listed tool: %d tool-error-as-result, want 0", got)
	}
}
