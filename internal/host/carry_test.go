package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// hostSaid lists the host frames of a live timeline (their bodies), in
// order.
func hostSaid(res *Result) []string {
	var out []string
	for _, f := range res.Live {
		if !f.IsEvent() && f.Dir == frame.In {
			out = append(out, string(f.Raw))
		}
	}
	return out
}

// TestCarriedValuesGoBack: a value the plugin issued that the host sent
// back in the recording is sent back as the live plugin issues it this
// time, found from the recording alone (a task id, a cursor: at least
// MinCarried long) or named by a rule (a short handle); a value the host
// said first, or a short one no rule names, goes as recorded. Each case is
// a recording, what the live plugin issues instead, and the host frames
// that must go out.
func TestCarriedValuesGoBack(t *testing.T) {
	t.Parallel()
	rule := func(method string, path []string) bool {
		return method == "open" && slices.Equal(path, []string{"result", "handle"})
	}
	for _, c := range []struct {
		name     string
		rec      []string
		live     map[string]string // recorded value → what the live plugin says instead
		rd       Reading
		wantHost []string
		wantKept []string // Result.Carried's places
	}{{
		name: "task id",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"EUDS6TGUVEOS5KSY","status":"working"}}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"EUDS6TGUVEOS5KSY"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"taskId":"EUDS6TGUVEOS5KSY","status":"completed"}}`,
			"eof",
		},
		live: map[string]string{"EUDS6TGUVEOS5KSY": "HLHDVZ6OH23WQG67"},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task"}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"HLHDVZ6OH23WQG67"}}`,
		},
		wantKept: []string{"tools/call:result.task.taskId"},
	}, {
		name: "cursors, the second never sent back",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"items":[1],"nextCursor":"c-AAAAAAAAAA"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"list","params":{"cursor":"c-AAAAAAAAAA"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"items":[2],"nextCursor":"c-BBBBBBBBBB"}}`,
			"eof",
		},
		live: map[string]string{"c-AAAAAAAAAA": "c-XXXXXXXXXX", "c-BBBBBBBBBB": "c-YYYYYYYYYY"},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"list"}`,
			`{"jsonrpc":"2.0","id":2,"method":"list","params":{"cursor":"c-XXXXXXXXXX"}}`,
		},
		wantKept: []string{"list:result.nextCursor", "list:result.nextCursor"},
	}, {
		name: "a short value is carried only by a rule",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"open"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"handle":"h7"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"read","params":{"handle":"h7"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			"eof",
		},
		live: map[string]string{`"h7"`: `"h9"`},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"open"}`,
			`{"jsonrpc":"2.0","id":2,"method":"read","params":{"handle":"h7"}}`,
		},
	}, {
		name: "the same with the rule",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"open"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"handle":"h7"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"read","params":{"handle":"h7"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			"eof",
		},
		live: map[string]string{`"h7"`: `"h9"`},
		rd:   Reading{Carry: rule},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"open"}`,
			`{"jsonrpc":"2.0","id":2,"method":"read","params":{"handle":"h9"}}`,
		},
		wantKept: []string{"open:result.handle"},
	}, {
		name: "a short value a rule names goes back only under its own name",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"initialize"}`,
			`< {"jsonrpc":"2.0","id":"c","method":"progress/create","params":{"token":1}}`,
			`> {"jsonrpc":"2.0","id":"c","result":null}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","method":"progress/cancel","params":{"token":1,"version":1}}`,
			"eof",
		},
		live: map[string]string{`"token":1`: `"token":5`},
		rd: Reading{Carry: func(method string, path []string) bool {
			return method == "progress/create" && slices.Equal(path, []string{"params", "token"})
		}},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
			`{"jsonrpc":"2.0","id":"c","result":null}`,
			`{"jsonrpc":"2.0","method":"progress/cancel","params":{"token":5,"version":1}}`,
		},
		wantKept: []string{"progress/create:params.token"},
	}, {
		name: "a number said again inside a string or another number is still a new value",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"initialize"}`,
			`< {"jsonrpc":"2.0","id":"c","method":"progress/create","params":{"token":1,"title":"job 1 of 10","total":10}}`,
			`> {"jsonrpc":"2.0","id":"c","result":null}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","method":"progress/cancel","params":{"token":1,"version":1}}`,
			"eof",
		},
		live: map[string]string{`"token":1`: `"token":5`},
		rd: Reading{Carry: func(method string, path []string) bool {
			return method == "progress/create" && slices.Equal(path, []string{"params", "token"})
		}},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
			`{"jsonrpc":"2.0","id":"c","result":null}`,
			`{"jsonrpc":"2.0","method":"progress/cancel","params":{"token":5,"version":1}}`,
		},
		wantKept: []string{"progress/create:params.token"},
	}, {
		name: "a name from a list the plugin ordered otherwise is not a new value",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"longRunning"},{"name":"getTinyImage"}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getTinyImage"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			"eof",
		},
		live: map[string]string{`[{"name":"longRunning"},{"name":"getTinyImage"}]`: `[{"name":"getTinyImage"},{"name":"longRunning"}]`},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getTinyImage"}}`,
		},
	}, {
		name: "a value the host said first is the host's",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"open","params":{"uri":"file:///work/notes.txt"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"uri":"file:///work/notes.txt"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"read","params":{"uri":"file:///work/notes.txt"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			"eof",
		},
		live: map[string]string{"file:///work/notes.txt": "file:///elsewhere.txt"},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"open","params":{"uri":"file:///work/notes.txt"}}`,
			`{"jsonrpc":"2.0","id":2,"method":"read","params":{"uri":"file:///work/notes.txt"}}`,
		},
	}, {
		name: "in the host's answer to the plugin's request, and by a notification",
		rec: []string{
			`> {"jsonrpc":"2.0","id":1,"method":"start"}`,
			`< {"jsonrpc":"2.0","method":"session","params":{"session":"S-1234567890"}}`,
			`< {"jsonrpc":"2.0","id":"q","method":"whoami","params":{}}`,
			`> {"jsonrpc":"2.0","id":"q","result":{"session":"S-1234567890","n":12345678}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			"eof",
		},
		live: map[string]string{"S-1234567890": "S-0987654321"},
		wantHost: []string{
			`{"jsonrpc":"2.0","id":1,"method":"start"}`,
			`{"jsonrpc":"2.0","id":"q","result":{"session":"S-0987654321","n":12345678}}`,
		},
		wantKept: []string{"session:params.session"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := tl(c.rec...)
				p := fake(func(in *bufio.Reader, say func(string)) {
					for _, l := range c.rec {
						switch {
						case strings.HasPrefix(l, "> "):
							in.ReadString('\n')
						case strings.HasPrefix(l, "< "):
							out := l[2:]
							for old, live := range c.live {
								out = strings.ReplaceAll(out, old, live)
							}
							say(out)
						}
					}
					io.Copy(io.Discard, in)
				})
				res, err := play(context.Background(), makePlan(rec, c.rd), p, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := hostSaid(res); !slices.Equal(got, c.wantHost) {
					t.Errorf("host sent\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.wantHost, "\n"))
				}
				var places []string
				for _, k := range res.Carried {
					places = append(places, k.Place)
				}
				if !slices.Equal(places, c.wantKept) {
					t.Errorf("carried %q, want %q", places, c.wantKept)
				}
				if len(res.Notes) > 0 {
					t.Errorf("notes %q", res.Notes)
				}
				// Compared, the live run says what the recording said
				// wherever a value was carried.
				var want, got []string
				for _, f := range rec {
					if !f.IsEvent() && f.Dir == frame.Out {
						want = append(want, string(f.Raw))
					}
				}
				for _, f := range Uncarry(res.Live, res.Carried) {
					if !f.IsEvent() && f.Dir == frame.Out {
						got = append(got, string(f.Raw))
					}
				}
				if len(c.wantKept) > 0 && !slices.Equal(got, want) {
					t.Errorf("uncarried live\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		})
	}
}

// TestCarriedHeaderFramed: a language server's token goes back in a
// header-framed frame whose Content-Length is the new body's; the host's
// answer to the server's window/workDoneProgress/create matches its call
// although the live token differs (no note).
func TestCarriedHeaderFramed(t *testing.T) {
	t.Parallel()
	head := func(body string) []byte { return wire.HeadFor(len(body)) }
	mk := func(dir frame.Dir, body string) frame.Frame {
		f := frame.Frame{Dir: dir, Raw: []byte(body)}
		f.SetHead(head(body))
		return f
	}
	recBodies := []struct {
		dir  frame.Dir
		body string
	}{
		{frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{frame.Out, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{frame.Out, `{"jsonrpc":"2.0","id":1,"method":"window/workDoneProgress/create","params":{"token":"42"}}`},
		{frame.In, `{"jsonrpc":"2.0","id":1,"result":null}`},
		{frame.In, `{"jsonrpc":"2.0","method":"window/workDoneProgress/cancel","params":{"token":"42"}}`},
	}
	var rec []frame.Frame
	for i, b := range recBodies {
		f := mk(b.dir, b.body)
		f.Seq = uint64(i + 1)
		rec = append(rec, f)
	}
	rec = append(rec, frame.Frame{Seq: 6, Event: frame.EventEOF, Dir: frame.In})
	rd := Reading{Carry: func(method string, path []string) bool {
		return method == "window/workDoneProgress/create" && slices.Equal(path, []string{"params", "token"})
	}}
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		var got []string
		go func() {
			defer close(done)
			in := bufio.NewReader(inR)
			read := func() {
				if h, b, ok := readHeaderFrame(in); ok {
					got = append(got, h+b)
				}
			}
			say := func(body string) { outW.Write(append(head(body), body...)) }
			read() // initialize
			say(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			say(`{"jsonrpc":"2.0","id":1,"method":"window/workDoneProgress/create","params":{"token":"1234"}}`)
			read() // the answer
			read() // cancel
			outW.Close()
			io.Copy(io.Discard, inR)
		}()
		p := Plugin{Stdin: inW, Stdout: outR, Signal: func(os.Signal) error { return nil }, Wait: func() Exit { <-done; return Exit{} }}
		res, err := play(context.Background(), makePlan(rec, rd), p, Options{Framing: wire.Headers})
		if err != nil {
			t.Fatal(err)
		}
		cancel := `{"jsonrpc":"2.0","method":"window/workDoneProgress/cancel","params":{"token":"1234"}}`
		if len(got) != 3 || got[2] != "Content-Length: "+strconv.Itoa(len(cancel))+"\r\n\r\n"+cancel {
			t.Errorf("the server read %q", got)
		}
		if len(res.Notes) > 0 {
			t.Errorf("notes %q", res.Notes)
		}
	})
}

// TestChatterIsNotWaitedFor: the plugin's reports on its own work are not
// waited for, and a request of chatter beyond the recorded ones gets the
// recorded answer of its method, not an error.
func TestChatterIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	rec := tl(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`< {"jsonrpc":"2.0","id":"c1","method":"progress/create","params":{"token":"t1"}}`,
		`> {"jsonrpc":"2.0","id":"c1","result":null}`,
		`< {"jsonrpc":"2.0","method":"progress","params":{"n":1}}`,
		`< {"jsonrpc":"2.0","method":"progress","params":{"n":2}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"shutdown"}`,
		`< {"jsonrpc":"2.0","id":2,"result":null}`,
		"eof",
	)
	rd := Reading{Chatter: func(m string) bool { return m == "progress" || m == "progress/create" }}
	synctest.Test(t, func(t *testing.T) {
		var answers []string
		p := fake(func(in *bufio.Reader, say func(string)) {
			in.ReadString('\n') // initialize
			say(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			in.ReadString('\n') // shutdown, not held up by the progress never said
			say(`{"jsonrpc":"2.0","id":"x","method":"progress/create","params":{"token":"a"}}`)
			say(`{"jsonrpc":"2.0","id":"y","method":"progress/create","params":{"token":"b"}}`)
			for range 2 {
				l, _ := in.ReadString('\n')
				answers = append(answers, strings.TrimSpace(l))
			}
			say(`{"jsonrpc":"2.0","id":2,"result":null}`)
			io.Copy(io.Discard, in)
		})
		begin := time.Now()
		res, err := play(context.Background(), makePlan(rec, rd), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(begin); d > time.Second {
			t.Errorf("the replay took %v: it waited for chatter", d)
		}
		want := []string{`{"jsonrpc":"2.0","id":"x","result":null}`, `{"jsonrpc":"2.0","id":"y","result":null}`}
		if !slices.Equal(answers, want) {
			t.Errorf("answers %q, want %q", answers, want)
		}
		if len(res.Unmatched) > 0 || len(res.GaveUp) > 0 {
			t.Errorf("unmatched %q, gave up %v, notes %q", res.Unmatched, res.GaveUp, res.Notes)
		}
	})
}

// TestValueKeyAndPlace: what a value is known by, when it is long enough
// to be carried by itself, and how a place is spelled.
func TestValueKeyAndPlace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tok        string
		key        string
		long, isOK bool
	}{
		{`"abcdefgh"`, "sabcdefgh", true, true},
		{`"abcdefg"`, "sabcdefg", false, true},
		{`"ab\u0063defgh"`, "sabcdefgh", true, true},
		{`12345678`, "n12345678", true, true},
		{`-1234567`, "n-1234567", false, true},
		{`1234567.5`, "n1234567.5", false, true},
		{`true`, "", false, false},
	} {
		key, long, ok := valueKey([]byte(c.tok))
		if key != c.key || long != c.long || ok != c.isOK {
			t.Errorf("valueKey(%s) = %q %v %v, want %q %v %v", c.tok, key, long, ok, c.key, c.long, c.isOK)
		}
	}
	if got := placeOf("m", []string{"result", "items", "[3]", "content-type", "a b"}); got != `m:result.items[3].content-type["a b"]` {
		t.Errorf("place %s", got)
	}
}

// FuzzCarryLeaves: the walk over a message's params and result never
// panics, and on valid JSON each value it reports is a valid JSON string
// or number inside the text.
func FuzzCarryLeaves(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"EUDS6TGU","ttl":60000},"a":[1,"x",{"b":null}]}}`,
		`{"params":{"a\"b":"\u00e9\n","c":[[[-1.5e3]]]}}`,
		`{"result":"`, `{"params":[`, `[]`, `{"result":{"k":tru}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := json.Valid(b)
		leaves(b, func(path []string, s, e int) {
			if s < 0 || e > len(b) || s > e {
				t.Fatalf("token [%d,%d) outside %d bytes", s, e, len(b))
			}
			if valid && !json.Valid(b[s:e]) {
				t.Fatalf("token %q at %v is not JSON", b[s:e], path)
			}
			if len(path) == 0 || len(path) > maxCarryDepth+1 {
				t.Fatalf("path %v", path)
			}
		})
		if valid {
			var seen bytes.Buffer
			leaves(b, func(path []string, s, e int) { fmt.Fprintf(&seen, "%v=%s;", path, b[s:e]) })
		}
	})
}

// readHeaderFrame reads one header-framed message: its header block and
// its body; false at the end of the input or on a block without a length.
func readHeaderFrame(in *bufio.Reader) (head, body string, ok bool) {
	n := -1
	for {
		l, err := in.ReadString('\n')
		if err != nil {
			return "", "", false
		}
		head += l
		if l == "\r\n" {
			break
		}
		if v, found := strings.CutPrefix(l, "Content-Length: "); found {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return "", "", false
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(in, b); err != nil {
		return "", "", false
	}
	return head, string(b), true
}

// TestCarryReadsWithoutAllocatingPerFrame: finding what a recording
// carries back allocates a few slices and maps, not something for each
// frame: walking a host frame's values took a 16-string path array from
// the heap (256 bytes a frame) and the frames' list grew by doubling, 42
// and 20 MB of a 200,000-frame replay's 212 MB of garbage, and its live
// peak 3.2 times the tape at 1,000,000 frames. (Not parallel:
// AllocsPerRun counts the whole process's allocations.)
func TestCarryReadsWithoutAllocatingPerFrame(t *testing.T) {
	rec := echoRecording(10000)
	msgs := parseAll(rec)
	if n := testing.AllocsPerRun(3, func() { planCarry(rec, msgs, Reading{}) }); n > 100 {
		t.Errorf("planCarry of %d frames: %.0f allocations, want under 100", len(rec), n)
	}
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a long enough value"}}}`)
	if n := testing.AllocsPerRun(100, func() { values(body, func(int, int) {}) }); n != 0 {
		t.Errorf("values: %.0f allocations a frame, want none", n)
	}
}

// TestTokensOfAFrame: the tokens a frame says, by which a carried value
// said again elsewhere in it is found: strings and member names as
// written, numbers and literals whole, none inside another.
func TestTokensOfAFrame(t *testing.T) {
	t.Parallel()
	got := tokensOf([]byte(`{"a" : "x\"y", "n":3120,"l":[true,null,-1.5e3,{}],"s":"id 5"}`))
	for _, want := range []string{`"a"`, `"x\"y"`, `"n"`, `"l"`, `"s"`, `3120`, `true`, `null`, `-1.5e3`, `"id 5"`} {
		if _, ok := got[want]; !ok {
			t.Errorf("%s is not among the tokens %q", want, got)
		}
	}
	for _, not := range []string{`5`, `12`, `x`, `"x"`, `{}`, ``} {
		if _, ok := got[not]; ok {
			t.Errorf("%s is among the tokens %q", not, got)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d tokens %q, want 10", len(got), got)
	}
}
