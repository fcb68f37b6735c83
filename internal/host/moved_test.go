package host

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// TestMovedFolders: a folder the recording gave the plugin that this run
// gives it another of is said as this run's wherever the host said the
// recorded one (alone, inside a path, inside a file: URI, in a recorded
// answer), never where the path does not stand whole; the plugin's own
// request that names this run's folder matches the recorded call (no
// note), and what it says of it is compared as the recorded path.
func TestMovedFolders(t *testing.T) {
	t.Parallel()
	const rec, run = "/tmp/play-data-1", "/tmp/run copy-7"
	recording := tl(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"plugin":{"dataDir":"/tmp/play-data-1"},"other":"/tmp/play-data-10","uri":"file:///tmp/play-data-1/a.txt","var":"/var/tmp/play-data-1"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`< {"jsonrpc":"2.0","id":"q","method":"files/where","params":{"dir":"/tmp/play-data-1/notes"}}`,
		`> {"jsonrpc":"2.0","id":"q","result":{"path":"/tmp/play-data-1/notes/n.md","size":1}}`,
		`< {"jsonrpc":"2.0","method":"ui/notify","params":{"message":"saved /tmp/play-data-1/notes/n.md"}}`,
		"eof",
	)
	wantHost := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"plugin":{"dataDir":"/tmp/run copy-7"},"other":"/tmp/play-data-10","uri":"file:///tmp/run copy-7/a.txt","var":"/var/tmp/play-data-1"}}`,
		`{"jsonrpc":"2.0","id":"q","result":{"path":"/tmp/run copy-7/notes/n.md","size":1}}`,
	}
	synctest.Test(t, func(t *testing.T) {
		var read []string
		p := fake(func(in *bufio.Reader, say func(string)) {
			l, _ := in.ReadString('\n')
			read = append(read, strings.TrimSuffix(l, "\n"))
			say(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			say(`{"jsonrpc":"2.0","id":"q","method":"files/where","params":{"dir":"/tmp/run copy-7/notes"}}`)
			l, _ = in.ReadString('\n')
			read = append(read, strings.TrimSuffix(l, "\n"))
			say(`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"saved /tmp/run copy-7/notes/n.md"}}`)
			io.Copy(io.Discard, in)
		})
		res, err := play(context.Background(), makePlan(recording, Reading{Moved: []string{rec}}), p, Options{Moved: map[string]string{rec: run}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(read, wantHost) {
			t.Errorf("the plugin read\n%s\nwant\n%s", strings.Join(read, "\n"), strings.Join(wantHost, "\n"))
		}
		if got := hostSaid(res); !slices.Equal(got, wantHost) {
			t.Errorf("the timeline's host frames\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantHost, "\n"))
		}
		if len(res.Notes) > 0 {
			t.Errorf("notes %q", res.Notes)
		}
		var want, got []string
		for _, f := range recording {
			if !f.IsEvent() && f.Dir == frame.Out {
				want = append(want, string(f.Raw))
			}
		}
		back := Unmove(res.Live, map[string]string{rec: run})
		for _, f := range back {
			if !f.IsEvent() && f.Dir == frame.Out {
				got = append(got, string(f.Raw))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("unmoved live\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		said := false
		for _, f := range res.Live {
			said = said || f.Dir == frame.Out && strings.Contains(string(f.Raw), run)
		}
		if !said {
			t.Error("Unmove changed the live timeline itself")
		}
	})
}

// TestMovedNothing: without Moved, or when a run's folder is the recorded
// one, the host frames go as recorded and Unmove returns live itself.
func TestMovedNothing(t *testing.T) {
	t.Parallel()
	live := tl(`< {"jsonrpc":"2.0","method":"x","params":{"p":"/a/b"}}`)
	for _, moved := range []map[string]string{nil, {"/a/b": "/a/b"}, {"/a/bc": "/x"}} {
		if got := Unmove(live, moved); &got[0] != &live[0] {
			t.Errorf("Unmove(%v) made a copy", moved)
		}
	}
}

// TestMovedHeaderFramed: a header-framed host frame that says a moved
// folder goes with the Content-Length of its new body.
func TestMovedHeaderFramed(t *testing.T) {
	t.Parallel()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file:///w/proj"}}`
	f := frame.Frame{Seq: 1, Dir: frame.In, Raw: []byte(body)}
	f.SetHead(wire.HeadFor(len(body)))
	rec := []frame.Frame{f, {Seq: 2, Event: frame.EventEOF, Dir: frame.In}}
	synctest.Test(t, func(t *testing.T) {
		var got string
		p := fake(func(in *bufio.Reader, say func(string)) {
			if h, b, ok := readHeaderFrame(in); ok {
				got = h + b
			}
			io.Copy(io.Discard, in)
		})
		if _, err := play(context.Background(), makePlan(rec, Reading{Moved: []string{"/w/proj"}}), p, Options{Framing: wire.Headers, Moved: map[string]string{"/w/proj": "/tmp/copy-of-proj"}}); err != nil {
			t.Fatal(err)
		}
		want := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file:///tmp/copy-of-proj"}}`
		if got != "Content-Length: "+strconv.Itoa(len(want))+"\r\n\r\n"+want {
			t.Errorf("the server read %q", got)
		}
	})
}

// FuzzMovedPaths: finding a moved folder in any bytes never panics; the
// places found are in order, inside the bytes, apart, each the path's
// spelling standing whole; and putting the run's folder there and then
// the recorded one back gives the bytes again (when the run's folder was
// not said in them already).
func FuzzMovedPaths(f *testing.F) {
	for _, s := range [][2]string{
		{`{"params":{"plugin":{"dataDir":"/tmp/d"}},"x":"/tmp/dd","u":"file:///tmp/d/a"}`, "/tmp/d"},
		{`/tmp/d/tmp/d /tmp/d`, "/tmp/d"},
		{`{"p":"C:\\x"}`, `C:\x`},
		{``, "/a"}, {`/`, "/"}, {`"\u002ftmp"`, "/tmp"},
	} {
		f.Add([]byte(s[0]), s[1])
	}
	const live = "/tmp/tapedeck-data-run/data"
	f.Fuzz(func(t *testing.T, raw []byte, path string) {
		paths := movedPaths([]string{path})
		sites := movedSites(raw, paths)
		last := 0
		for _, s := range sites {
			if s.start < last || s.end > len(raw) || s.start >= s.end {
				t.Fatalf("site [%d,%d) after %d in %d bytes", s.start, s.end, last, len(raw))
			}
			if string(raw[s.start:s.end]) != string(paths[0].spelled) || s.start > 0 && s.start != last && nameByte(raw[s.start-1]) || s.end < len(raw) && nameByte(raw[s.end]) {
				t.Fatalf("site %q at %d does not stand whole", raw[s.start:s.end], s.start)
			}
			last = s.end
		}
		if len(paths) == 0 || strings.Contains(string(raw), live) || strings.Contains(live, path) || strings.Contains(path, live) {
			return
		}
		r := &runner{plan: &plan{}, opts: Options{Moved: map[string]string{path: live}}}
		r.plan.carry = &carryPlan{}
		r.moveIn()
		moved := r.rewrite(raw, sites)
		back, to := backPaths(r.opts.Moved)
		if got := unmoved(moved, back, to); string(got) != string(raw) {
			t.Fatalf("moved %q and back: %q", raw, got)
		}
	})
}

// TestMergeSitesReadsSideBySide: mergeSites gives what comparing each site
// of b with every one of a gave (mergeSitesByPairs), over random sites in
// and out of order, overlapping or not.
func TestMergeSitesReadsSideBySide(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(36, 5))
	sites := func(n int) []hostSite {
		var out []hostSite
		for range n {
			s := rng.IntN(200)
			out = append(out, hostSite{start: s, end: s + 1 + rng.IntN(12), key: strconv.Itoa(rng.IntN(1000))})
		}
		if rng.IntN(2) == 0 {
			slices.SortFunc(out, func(x, y hostSite) int { return x.start - y.start })
		}
		return out
	}
	for round := range 2000 {
		a, b := sites(rng.IntN(12)), sites(rng.IntN(12))
		got, want := mergeSites(a, b), mergeSitesByPairs(a, b)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: mergeSites(%v, %v)\n = %v\nwant %v", round, a, b, got, want)
		}
	}
}

// mergeSitesByPairs is mergeSites as it was: each site of b compared with
// every one of a, then all put in order of their starts (a first among
// equal starts).
func mergeSitesByPairs(a, b []hostSite) []hostSite {
	if len(a) == 0 {
		return b
	}
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.ContainsFunc(a, func(t hostSite) bool { return s.start < t.end && t.start < s.end }) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(x, y hostSite) int { return x.start - y.start })
	return out
}
