package coverage

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/profile"
)

// frames builds a tape, as AddTape reads it: each line is "in JSON" or
// "out JSON".
func frames(lines ...string) func(func(*frame.Frame) error) error {
	return func(fn func(*frame.Frame) error) error {
		for i, l := range lines {
			dir, raw, _ := strings.Cut(l, " ")
			d := frame.In
			if dir == "out" {
				d = frame.Out
			}
			if err := fn(&frame.Frame{Seq: uint64(i + 1), Dir: d, Raw: []byte(raw)}); err != nil {
				return err
			}
		}
		return nil
	}
}

func call(id int, method, params string) string {
	return fmt.Sprintf(`in {"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func answer(id int, result string) string {
	return fmt.Sprintf(`out {"jsonrpc":"2.0","id":%d,"result":%s}`, id, result)
}

// TestMCPOffersAgainstUses: what an MCP server advertised over every tape
// (pages of tools/list, resources/list, resources/templates/list and
// prompts/list) is counted against the tapes' tools/call, resources/read
// and prompts/get; a read counts for the resource it names and each
// template it matches; a use of something never advertised is listed as
// such and counts for neither side of the share.
func TestMCPOffersAgainstUses(t *testing.T) {
	p := New("everything")
	p.UseProfile(profile.MCP{})
	p.AddTape("list.jsonl", frames(
		call(1, "initialize", `{"protocolVersion":"2025-06-18"}`),
		answer(1, `{"protocolVersion":"2025-06-18","serverInfo":{"name":"everything"}}`),
		call(2, "tools/list", `{}`),
		answer(2, `{"tools":[{"name":"echo"},{"name":"add"}],"nextCursor":"c1"}`),
		call(3, "tools/list", `{"cursor":"c1"}`),
		answer(3, `{"tools":[{"name":"slow"},{"name":""},{"title":"no name"}]}`),
		call(4, "resources/list", `{}`),
		answer(4, `{"resources":[{"uri":"demo://a"},{"uri":"demo://b"}]}`),
		call(5, "resources/templates/list", `{}`),
		answer(5, `{"resourceTemplates":[{"uriTemplate":"demo://note/{id}"},{"uriTemplate":"file:///{+path}"}]}`),
		call(6, "prompts/list", `{}`),
		`out {"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"no prompts"}}`,
	))
	p.AddTape("use.jsonl", frames(
		call(1, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`),
		call(2, "tools/call", `{"name":"echo","arguments":{"text":"again"}}`),
		call(3, "tools/call", `{"name":"ghost"}`),
		call(4, "resources/read", `{"uri":"demo://a"}`),
		call(5, "resources/read", `{"uri":"demo://note/7"}`),
		call(6, "resources/read", `{"uri":"demo://note/7/extra"}`),
		call(7, "resources/read", `{"uri":"file:///etc/hosts"}`),
		call(8, "prompts/get", `{"name":"simple"}`),
		// An answer to a list the tape did not ask is no advertisement.
		answer(99, `{"tools":[{"name":"stray"}]}`),
	))
	p.Finish()
	want := []Offered{
		{"tool", "add", 0, true},
		{"tool", "echo", 2, true},
		{"tool", "slow", 0, true},
		{"resource", "demo://a", 1, true},
		{"resource", "demo://b", 0, true},
		{"resource template", "demo://note/{id}", 1, true},
		{"resource template", "file:///{+path}", 1, true},
		{"prompt", "simple", 1, false},
		{"resource", "demo://note/7/extra", 1, false},
		{"tool", "ghost", 1, false},
	}
	if !reflect.DeepEqual(p.Offered, want) {
		t.Errorf("Offered =\n%+v\nwant\n%+v", p.Offered, want)
	}
	if done, total := p.Covered(); done != 4 || total != 7 {
		t.Errorf("Covered = %d of %d, want 4 of 7", done, total)
	}
	if p.Profile != "mcp" || p.PluginErrors["prompts/list"] != 1 {
		t.Errorf("Profile %q, plugin errors %v", p.Profile, p.PluginErrors)
	}
}

// TestAgenttyCoverageIsUnchanged: an Agentty plugin's coverage (and a
// JSON-RPC peer's, of which nothing is known) counts no offers and its
// JSON has none of a server's members.
func TestAgenttyCoverageIsUnchanged(t *testing.T) {
	for _, prof := range []profile.Profile{profile.Agentty{}, profile.JSONRPC{}} {
		p := New("hello")
		p.UseProfile(prof)
		p.AddTape("a.jsonl", frames(
			call(1, "tools/list", `{}`),
			answer(1, `{"tools":[{"name":"echo"}]}`),
			call(2, "command/execute", `{"command":"hello.greet"}`),
		))
		p.Finish()
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(js), `"offered"`) || strings.Contains(string(js), `"profile"`) || p.Offered != nil {
			t.Errorf("%s: the coverage has offers: %s", prof.Name(), js)
		}
		if done, total := p.Covered(); done != 0 || total != 0 {
			t.Errorf("%s: Covered = %d of %d, want 0 of 0 (a command run but not contributed)", prof.Name(), done, total)
		}
	}
}

// TestCraftedNamesStayBounded: a tape that names a method, an element and
// a tool of its own in every frame, each 2 kB long, 20,000 of them. What
// coverage keeps is bounded (maxNames names a table, each cut to
// maxNameLen), the rest counted as Others; before, every name whole
// (the frames too: 2.9 GB for a 641 MB tape).
func TestCraftedNamesStayBounded(t *testing.T) {
	p := New("crafted")
	p.UseProfile(profile.MCP{})
	pad := strings.Repeat("m", 2000)
	const n = 20_000
	tape := func(fn func(*frame.Frame) error) error {
		var f frame.Frame
		for i := range n {
			f = frame.Frame{Seq: uint64(2*i + 1), Dir: frame.In, Raw: fmt.Appendf(f.Raw[:0],
				`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%d%s"}}`, i, i, pad)}
			if err := fn(&f); err != nil {
				return err
			}
			f = frame.Frame{Seq: uint64(2*i + 2), Dir: frame.Out, Raw: fmt.Appendf(f.Raw[:0],
				`{"jsonrpc":"2.0","method":"%d/%s","params":{}}`, i, pad)}
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := p.AddTape("crafted.jsonl", tape); err != nil {
		t.Fatal(err)
	}
	p.Finish()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 24<<20 {
		t.Errorf("20,000 names of 2 kB grew the heap %.1f MiB, want under 24 MiB", float64(grew)/(1<<20))
	}
	if len(p.PluginMethods) != maxNames+1 || p.PluginMethods[Others] != n-maxNames {
		t.Errorf("%d plugin methods, %d as %s; want %d and %d", len(p.PluginMethods), p.PluginMethods[Others], Others, maxNames+1, n-maxNames)
	}
	others := 0
	for _, o := range p.Offered {
		if len(o.Name) > maxNameLen+len("…") {
			t.Fatalf("an offer's name of %d bytes is kept", len(o.Name))
		}
		if o.Name == Others {
			others = o.Uses
		}
	}
	if len(p.Offered) != maxNames+1 || others != n-maxNames {
		t.Errorf("%d offers, %d uses as %s; want %d and %d", len(p.Offered), others, Others, maxNames+1, n-maxNames)
	}
	runtime.KeepAlive(p)
}
