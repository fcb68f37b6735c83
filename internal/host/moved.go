package host

import (
	"bytes"
	"slices"
	"sort"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// Folders moved. A replay may give the plugin another folder than the
// recording did (a copy of its data folder made for this run, so that
// runs share nothing): the host frames that named the recorded folder
// must name this run's. Reading.Moved lists the recorded folders' paths;
// the plan finds where each host frame and each recorded answer spells
// one (anywhere inside a string: alone, as the start of a path inside
// it, inside a file: URI), and each run puts its own folder there
// (Options.Moved) with the step that carries values back (rewrite). What
// the plugin says of its folder is put back to the recorded path for the
// comparison (Unmove), and a request of the plugin's is matched with its
// params put back so.
//
// A path is found where it stands whole: the bytes on either side are not
// those of a file name (letters, digits, '.', '_', '-', '~'), so that
// /tmp/a is not found in /tmp/ab or /var/tmp/a.

// movedPath is a recorded folder as the plan finds it.
type movedPath struct {
	path    string // the path
	spelled []byte // as a JSON string spells it, without the quotes
}

// movedKey is the key a moved folder's live spelling is learned under
// (carryState.learned): no value's key starts so (see valueKey).
func movedKey(path string) string { return "m" + path }

// spell is s as a JSON string spells it, without the quotes.
func spell(s string) []byte {
	b := jsonscan.AppendString(nil, s)
	return b[1 : len(b)-1]
}

// movedPaths are paths as the plan finds them, longest first (a folder
// inside another is found before it), without empty or repeated ones.
func movedPaths(paths []string) []movedPath {
	var out []movedPath
	for _, p := range paths {
		if p == "" || p == "/" || slices.ContainsFunc(out, func(m movedPath) bool { return m.path == p }) {
			continue
		}
		out = append(out, movedPath{path: p, spelled: spell(p)})
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].path) > len(out[j].path) })
	return out
}

// nameByte reports whether c may be part of a file name next to a path
// found (see the comment at the top of this file).
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == '~'
}

// eachSpelled calls fn for each place of raw that spells one of paths
// whole, in order, without overlaps.
func eachSpelled(raw []byte, paths []movedPath, fn func(start, end int, m *movedPath)) {
	after := -1 // the end of the last place found: a place right after it stands whole too
	for i := 0; i < len(raw); {
		found := false
		for k := range paths {
			m := &paths[k]
			if !bytes.HasPrefix(raw[i:], m.spelled) {
				continue
			}
			end := i + len(m.spelled)
			if i > 0 && i != after && nameByte(raw[i-1]) || end < len(raw) && nameByte(raw[end]) {
				continue
			}
			fn(i, end, m)
			i, found, after = end, true, end
			break
		}
		if !found {
			// On to the next byte that may start a path.
			j := bytes.IndexByte(raw[i+1:], '/')
			if j < 0 {
				return
			}
			i += 1 + j
		}
	}
}

// movedSites are the places of raw that spell one of paths, as sites the
// rewrite step puts this run's folder in.
func movedSites(raw []byte, paths []movedPath) []hostSite {
	if len(paths) == 0 {
		return nil
	}
	var sites []hostSite
	eachSpelled(raw, paths, func(s, e int, m *movedPath) {
		sites = append(sites, hostSite{start: s, end: e, key: movedKey(m.path)})
	})
	return sites
}

// mergeSites is a and b in order of their starts, a site that overlaps
// one of a left out of b. Both are put in order of their starts (they
// mostly are) and read once side by side: a frame that holds many carried
// values and many paths in a moved folder took the square of them when
// each of b was compared with every one of a (80,000 of each: 11.3 s).
func mergeSites(a, b []hostSite) []hostSite {
	if len(a) == 0 {
		return b
	}
	byStart := func(s, t hostSite) int { return s.start - t.start }
	a = slices.Clone(a)
	slices.SortStableFunc(a, byStart)
	b = slices.Clone(b)
	slices.SortStableFunc(b, byStart)
	out := make([]hostSite, 0, len(a)+len(b))
	i, j := 0, 0 // the next of a to put out; the first of a that may overlap
	for _, s := range b {
		// A site of a that ends before s starts ends before every later
		// one of b starts; the first that does not overlaps s unless it
		// starts after s ends, as every one after it does.
		for j < len(a) && a[j].end <= s.start {
			j++
		}
		if j < len(a) && a[j].start < s.end {
			continue
		}
		for i < len(a) && a[i].start <= s.start {
			out = append(out, a[i])
			i++
		}
		out = append(out, s)
	}
	return append(out, a[i:]...)
}

// planMoved adds to cp (nil: a new one) the places the recorded host
// frames spell the moved folders; cp itself when there are none.
func planMoved(cp *carryPlan, recorded []frame.Frame, paths []movedPath) *carryPlan {
	if len(paths) == 0 {
		return cp
	}
	for i := range recorded {
		f := &recorded[i]
		if f.IsEvent() || f.Dir != frame.In || f.Cut != nil {
			continue
		}
		sites := movedSites(f.Raw, paths)
		if len(sites) == 0 {
			continue
		}
		if cp == nil {
			cp = &carryPlan{sources: map[uint64][]carrySite{}, occ: map[string][]uint64{}, host: map[uint64][]hostSite{}, blind: map[uint64]string{}}
		}
		cp.host[f.Seq] = mergeSites(cp.host[f.Seq], sites)
	}
	return cp
}

// moveIn makes the runner put this run's folders where the recording has
// the recorded ones (Options.Moved).
func (r *runner) moveIn() {
	if len(r.opts.Moved) == 0 || r.plan.carry == nil {
		return
	}
	if r.carry.learned == nil {
		r.carry.learned = map[string][]byte{}
	}
	for rec, live := range r.opts.Moved {
		r.carry.learned[movedKey(rec)] = spell(live)
	}
}

// unmoved is raw with each of this run's folders put back to the
// recorded path; raw itself when it spells none.
func unmoved(raw []byte, back []movedPath, recorded map[string][]byte) []byte {
	var out []byte
	last := 0
	eachSpelled(raw, back, func(s, e int, m *movedPath) {
		out = append(append(out, raw[last:s]...), recorded[m.path]...)
		last = e
	})
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// backPaths are the live folders of moved (recorded → live) as the
// plugin may spell them, and the recorded spelling of each.
func backPaths(moved map[string]string) ([]movedPath, map[string][]byte) {
	var live []string
	rec := map[string][]byte{}
	for r, l := range moved {
		if r == l {
			continue
		}
		live = append(live, l)
		rec[l] = spell(r)
	}
	return movedPaths(live), rec
}

// Unmove returns live (a replay's timeline) with each folder of the run
// (moved: recorded path → this run's) put back to the recorded path in
// what the plugin said on stdout and stderr, for comparing with the
// recording: the run's folder stands for the recorded one. It returns
// live itself when nothing changes, else a copy in which only the frames
// that changed have new bytes; live is never changed.
func Unmove(live []frame.Frame, moved map[string]string) []frame.Frame {
	back, rec := backPaths(moved)
	if len(back) == 0 {
		return live
	}
	var out []frame.Frame
	for i := range live {
		f := &live[i]
		if f.IsEvent() || f.Dir == frame.In || f.Cut != nil {
			continue
		}
		nb := unmoved(f.Raw, back, rec)
		if len(nb) == len(f.Raw) && bytes.Equal(nb, f.Raw) {
			continue
		}
		out = rewrite(out, live, i, nb)
	}
	if out == nil {
		return live
	}
	return out
}

// rewrite is out with frame i's body set to nb and its header, if it has
// one, reframed to nb's length; out is a copy of live made at the first
// rewrite, so that live itself is never changed.
func rewrite(out, live []frame.Frame, i int, nb []byte) []frame.Frame {
	if out == nil {
		out = slices.Clone(live)
	}
	out[i].Raw = nb
	if h := out[i].Head(); h != nil {
		out[i].SetHead(wire.Reframe(h, len(nb)))
	}
	return out
}
