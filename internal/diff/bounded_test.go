package diff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// longKeyFrames are two frames whose params hold one member named by n
// bytes of k, holding leaves members whose values all differ.
func longKeyFrames(n, leaves int) (a, b []frame.Frame) {
	key := strings.Repeat("k", n)
	body := func(v int) []byte {
		var s strings.Builder
		for i := range leaves {
			if i > 0 {
				s.WriteByte(',')
			}
			fmt.Fprintf(&s, `"m%05d":%d`, i, v)
		}
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"x","params":{%q:{%s}}}`, key, s.String()))
	}
	return []frame.Frame{{Seq: 1, Dir: frame.Out, Raw: body(0)}}, []frame.Frame{{Seq: 1, Dir: frame.Out, Raw: body(1)}}
}

// TestChangesPastMaxChangesAreCounted: a frame whose every leaf differs
// lists the first MaxChanges changes, counts the rest, and the rendering
// says so; what is built stays bounded by the frames, not by how many
// changes times how long their paths (a 16 KB member name over 2,000
// leaves had spelled 32 MB of paths).
func TestChangesPastMaxChangesAreCounted(t *testing.T) {
	const n, leaves = 16_000, 3_000
	a, b := longKeyFrames(n, leaves)
	key := strings.Repeat("k", n)
	var res Result
	alloc := allocated(func() { res = Frames(a, b, Options{Panel: "x"}) })
	if len(res.Differences) != 1 {
		t.Fatalf("%d differences, want 1", len(res.Differences))
	}
	d := res.Differences[0]
	if len(d.Changes) != MaxChanges || d.MoreChanges != leaves-MaxChanges {
		t.Fatalf("%d changes listed, %d more; want %d and %d", len(d.Changes), d.MoreChanges, MaxChanges, leaves-MaxChanges)
	}
	frameBytes := uint64(len(a[0].Raw) + len(b[0].Raw))
	if alloc > 64*frameBytes {
		t.Errorf("Frames allocated %d bytes for frames of %d, want at most %d", alloc, frameBytes, 64*frameBytes)
	}
	for i, c := range d.Changes {
		want := fmt.Sprintf("m%05d", i)
		if len(c.Segments) != 3 || c.Segments[0] != "params" || c.Segments[1] != key || c.Segments[2] != want {
			t.Fatalf("change %d: segments %.80q, want params, the whole key, %s", i, c.Segments, want)
		}
		if len(c.Path) > maxPath || !strings.HasSuffix(c.Path, "."+want) || !strings.HasPrefix(c.Path, "params.kkkk") || !strings.Contains(c.Path, "…(16000 bytes #") {
			t.Fatalf("change %d: path %q, want params.kkk…(16000 bytes #…).%s within %d bytes", i, c.Path, want, maxPath)
		}
	}
	var out strings.Builder
	if err := Render(&out, &res, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("    … and %d more changes\n", leaves-MaxChanges)) {
		t.Errorf("Render does not say the %d changes not listed", leaves-MaxChanges)
	}
	// The unified diff shows each side once; the changes ~100 bytes each.
	if limit := 4*int(frameBytes) + MaxChanges*200; out.Len() > limit {
		t.Errorf("Render wrote %d bytes, want at most %d", out.Len(), limit)
	}
}

// TestSpelledPathIsBounded: a long member name is cut and named by its
// length and hash (two such names stay apart), a deep path loses its
// middle; Segments stay whole.
func TestSpelledPathIsBounded(t *testing.T) {
	long1, long2 := strings.Repeat("é", 100)+"1", strings.Repeat("é", 100)+"2"
	cases := []struct {
		segs []string
		want string
	}{
		{nil, "(whole message)"},
		{[]string{"params", "tree", "children", "[1]", "text"}, "params.tree.children[1].text"},
		{[]string{"params", strings.Repeat("x", maxSegment)}, "params." + strings.Repeat("x", maxSegment)},
	}
	for _, c := range cases {
		if got := spellPath(c.segs, spellSegment); got != c.want {
			t.Errorf("spellPath(%q) = %q, want %q", c.segs, got, c.want)
		}
	}
	p1, p2 := spellPath([]string{"params", long1}, spellSegment), spellPath([]string{"params", long2}, spellSegment)
	if p1 == p2 || len(p1) > 7+maxSegment || !strings.HasPrefix(p1, "params."+strings.Repeat("é", segmentHead/2)+"…(201 bytes #") {
		t.Errorf("long segments spelled %q and %q: want distinct, cut at a rune, within %d bytes", p1, p2, 7+maxSegment)
	}
	deep := make([]string, MaxDepth)
	for i := range deep {
		deep[i] = fmt.Sprintf("%02d%s", i, strings.Repeat("d", 60))
	}
	got := spellPath(deep, spellSegment)
	if len(got) > maxPath+len("…") || !strings.HasPrefix(got, deep[0]+"."+deep[1]) || !strings.HasSuffix(got, deep[62]+"."+deep[63]) || !strings.Contains(got, "…") {
		t.Errorf("a path of %d segments spelled in %d bytes (%.60q…%.60q), want its ends within %d", len(deep), len(got), got, got[len(got)-60:], maxPath)
	}
}

// absorbSpacesReference is absorbSpaces as it was, re-gathering what it
// had gathered at every space (quadratic): what the new one must equal.
func absorbSpacesReference(spans []Span) []Span {
	var out []Span
	for i := 0; i < len(spans); i++ {
		s := spans[i]
		if s.Op == "=" && strings.TrimSpace(s.Text) == "" && len(out) > 0 && out[len(out)-1].Op != "=" && i+1 < len(spans) && spans[i+1].Op != "=" {
			var del, ins strings.Builder
			for len(out) > 0 && out[len(out)-1].Op != "=" {
				last := out[len(out)-1]
				out = out[:len(out)-1]
				if last.Op == "-" {
					del.WriteString(last.Text)
				} else {
					ins.WriteString(last.Text)
				}
			}
			del.WriteString(s.Text)
			ins.WriteString(s.Text)
			for i+1 < len(spans) && spans[i+1].Op != "=" {
				i++
				if spans[i].Op == "-" {
					del.WriteString(spans[i].Text)
				} else {
					ins.WriteString(spans[i].Text)
				}
			}
			out = appendSpan(out, "-", del.String())
			out = appendSpan(out, "+", ins.String())
			continue
		}
		out = appendSpan(out, s.Op, s.Text)
	}
	return out
}

// TestAbsorbSpacesMatchesTheReference: over random spans (runs of
// changes with spaces between, words kept, same ops side by side) and
// random word diffs, absorbSpaces spells what the quadratic one did.
func TestAbsorbSpacesMatchesTheReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := map[string][]string{
		"=": {" ", "  ", "\n", "\t ", "w", "two words", " x "},
		"-": {"a", "b c", " ", "dé"},
		"+": {"x", "y z", " ", "ü"},
	}
	ops := []string{"=", "-", "+"}
	for range 20_000 {
		spans := make([]Span, r.IntN(12))
		for i := range spans {
			op := ops[r.IntN(3)]
			spans[i] = Span{op, texts[op][r.IntN(len(texts[op]))]}
		}
		in := slices.Clone(spans)
		got, want := absorbSpaces(slices.Clone(spans)), absorbSpacesReference(slices.Clone(spans))
		if !slices.Equal(got, want) {
			t.Fatalf("absorbSpaces(%q) = %q, want %q", in, got, want)
		}
	}
	words := []string{"a", "b", "cc", "ddd", " ", "  ", ",", "\n"}
	for range 5_000 {
		mk := func() string {
			var s strings.Builder
			for range r.IntN(20) {
				s.WriteString(words[r.IntN(len(words))])
			}
			return s.String()
		}
		a, b := mk(), mk()
		ta, tb := tokens(a), tokens(b)
		var spans []Span
		ia, ib := 0, 0
		for _, e := range scriptOf(ta, tb) {
			switch e.op {
			case opEqual:
				spans = appendSpan(spans, "=", strings.Join(ta[ia:ia+e.n], ""))
				ia, ib = ia+e.n, ib+e.n
			case opDelete:
				spans = appendSpan(spans, "-", strings.Join(ta[ia:ia+e.n], ""))
				ia += e.n
			case opInsert:
				spans = appendSpan(spans, "+", strings.Join(tb[ib:ib+e.n], ""))
				ib += e.n
			}
		}
		if got, want := wordDiff(a, b), absorbSpacesReference(spans); !slices.Equal(got, want) {
			t.Fatalf("wordDiff(%q, %q) = %q, want %q", a, b, got, want)
		}
	}
}

// TestAbsorbSpacesIsLinear: words that all differ with the spaces
// between them alike are gathered into one - and one + once, not again
// at every space (2 MB had allocated 10 GB).
func TestAbsorbSpacesIsLinear(t *testing.T) {
	const words = 2_000
	word := strings.Repeat("w", 200)
	var spans []Span
	var a strings.Builder
	for i := range words {
		if i > 0 {
			spans = append(spans, Span{"=", " "})
			a.WriteByte(' ')
		}
		spans = append(spans, Span{"-", fmt.Sprintf("a%04d%s", i, word)}, Span{"+", fmt.Sprintf("b%04d%s", i, word)})
		fmt.Fprintf(&a, "a%04d%s", i, word)
	}
	var got []Span
	allocs := testing.AllocsPerRun(3, func() { got = absorbSpaces(spans) })
	if len(got) != 2 || got[0] != (Span{"-", a.String()}) || got[1].Op != "+" || len(got[1].Text) != a.Len() {
		t.Fatalf("absorbSpaces gave %d spans, want one - of the whole and one +", len(got))
	}
	if allocs > 100 {
		t.Errorf("absorbSpaces made %v allocations for %d words, want at most 100", allocs, words)
	}
	if b := allocated(func() { absorbSpaces(spans) }); b > uint64(16*a.Len()) {
		t.Errorf("absorbSpaces allocated %d bytes for %d bytes of text a side, want at most %d", b, a.Len(), 16*a.Len())
	}
}
