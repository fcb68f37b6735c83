package noise

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
)

// TestPlacesDecodeEachSideOnce: the values of a difference's changes are
// read from each side's JSON decoded once, however many changes it holds,
// and are those jsonpath.Lookup finds at each change's path: strings,
// values that are not, and paths one side lacks. Before, each change
// decoded the whole frame again: a plugin answering with 4,000 items that
// each vary took 48.6 s to find it.
func TestPlacesDecodeEachSideOnce(t *testing.T) {
	const n = 300
	answer := func(run int) string {
		var items []string
		for k := range n {
			items = append(items, fmt.Sprintf(`{"name":"file%d","v":"t-%d-%d"}`, k, run, k*7+run))
		}
		extra := `,"count":` + fmt.Sprint(run) + `,"gone":"here","odd":null,"tree":{"a":[1,"x"]}`
		if run > 0 {
			extra = `,"count":` + fmt.Sprint(run) + `,"odd":"now a string","tree":{"a":[2]}`
		}
		return `{"jsonrpc":"2.0","id":2,"result":{"items":[` + strings.Join(items, ",") + `]` + extra + `}}`
	}
	change := func(segs ...string) diff.Change {
		return diff.Change{Path: strings.Join(segs, "."), Old: "x", New: "y", Segments: segs}
	}
	var changes []diff.Change
	for k := range n {
		changes = append(changes, change("result", "items", jsonpath.Index(k), "v"))
	}
	changes = append(changes,
		change("result", "count"),                // a number
		change("result", "gone"),                 // absent from the runs
		change("result", "odd"),                  // null, then a string
		change("result", "tree", "a", "[1]"),     // out of range in the runs
		change("result", "tree", "a", "[01]"),    // not an index as jsonpath spells one
		change("result", "items", "[0]", "name"), // the same in every run
	)
	recorded := &diff.Side{JSON: json.RawMessage(answer(0))}
	var differences [][]diff.Difference
	for run := 1; run <= 2; run++ {
		differences = append(differences, []diff.Difference{{Method: "tools/list", Recorded: recorded, Live: &diff.Side{JSON: json.RawMessage(answer(run))}, Changes: changes}})
	}
	// A difference without a live side (a missing frame) decodes nothing
	// of it.
	differences = append(differences, []diff.Difference{{Method: "tools/list", Recorded: recorded, Changes: changes[:2]}})

	ps := newPlaces()
	for _, ds := range differences {
		ps.add(ds)
	}
	if limit := 2*2 + 1; ps.decoded > limit {
		t.Errorf("decoded %d sides for 3 differences of %d changes, want at most %d (each side once)", ps.decoded, len(changes), limit)
	}

	// What reading each value with jsonpath.Lookup finds.
	want := map[varied]*place{}
	for _, ds := range differences {
		for _, d := range ds {
			for _, ch := range d.Changes {
				v := variedAt(d.Method, ch)
				s := want[v]
				if s == nil {
					s = &place{strings: true}
					want[v] = s
					s.add(lookup(d.Recorded, ch.Segments))
				}
				s.add(lookup(d.Live, ch.Segments))
			}
		}
	}
	if len(ps.order) != len(changes) {
		t.Fatalf("%d places, want %d", len(ps.order), len(changes))
	}
	for _, v := range ps.order {
		got, w := ps.byVaried[v], want[v]
		if got.strings != w.strings || !slices.Equal(got.values, w.values) {
			t.Errorf("%s: strings %v values %q, want strings %v values %q", v.path, got.strings, got.values, w.strings, w.values)
		}
	}
}

// lookup is the value at segs in side's JSON as jsonpath.Lookup has it.
func lookup(side *diff.Side, segs []string) any {
	if side == nil {
		return nil
	}
	v, _ := jsonpath.Lookup(side.JSON, segs)
	return v
}

// TestDecodedSideIsLookup: the value a decodedSide finds at a path is
// the one jsonpath.Lookup finds, over random JSON and random paths (most
// of them there, some not, some odd index spellings), and no side, text
// that is not JSON.
func TestDecodedSideIsLookup(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "[0]", "[1]", "", "x.y"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.IntN(7); {
		case depth > 3 || k == 0:
			return []any{"s", 1.5, nil, true, "t"}[r.IntN(5)]
		case k < 4:
			o := map[string]any{}
			for range r.IntN(4) {
				o[names[r.IntN(len(names))]] = gen(depth + 1)
			}
			return o
		default:
			a := []any{}
			for range r.IntN(4) {
				a = append(a, gen(depth+1))
			}
			return a
		}
	}
	segPool := append(slices.Clone(names), "[2]", "[3]", "[00]", "[-1]", "[+1]", "[ 1]", "[]", "[99999999999999999999]", "c")
	for i := range 3000 {
		doc, _ := json.Marshal(gen(0))
		var segs []string
		for range r.IntN(5) {
			segs = append(segs, segPool[r.IntN(len(segPool))])
		}
		side := &diff.Side{JSON: doc}
		switch i % 50 {
		case 0:
			side = nil
		case 1:
			side.JSON = nil
		case 2:
			side.JSON = json.RawMessage("not json")
		case 3:
			side.JSON = json.RawMessage(`{"a":"s"} trailing`)
		}
		ds := decodedSide{side: side}
		for range 3 { // looked up more than once: the same
			if got, want := ds.at(segs), lookup(side, segs); !reflect.DeepEqual(got, want) {
				t.Fatalf("at(%q) in %s = %#v, want %#v", segs, doc, got, want)
			}
		}
	}
}
