package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// What a reader of findings keeps of them whole: a session with a finding
// in every frame (ten million of them, each naming a method as long as
// its line) costs no more than this.
const (
	MaxKept      = 10_000
	MaxKeptBytes = 4 << 20
)

// Kept is what a reader of a session's findings keeps of them: the first
// MaxKept (within MaxKeptBytes) whole, and a count of every finding by
// level and of those let go by rule.
type Kept struct {
	Findings []Finding     // the findings kept, in the order they came
	Levels   map[Level]int // every finding, kept or let go
	cut      map[string]int
	bytes    int
}

// Add counts fs and keeps what fits.
func (k *Kept) Add(fs ...Finding) {
	if k.Levels == nil {
		k.Levels, k.cut = map[Level]int{}, map[string]int{}
	}
	for _, f := range fs {
		k.Levels[f.Level]++
		size := len(f.Rule) + len(f.Method) + len(f.Message) + len(f.Path) + len(f.Spec) + 64
		if len(k.Findings) >= MaxKept || k.bytes+size > MaxKeptBytes {
			k.cut[f.Rule]++
			continue
		}
		k.Findings = append(k.Findings, f)
		k.bytes += size
	}
}

// Sorted returns the kept findings by frame, in the order they came
// within one frame.
func (k *Kept) Sorted() []Finding {
	slices.SortStableFunc(k.Findings, func(a, b Finding) int { return cmp.Compare(a.Seq, b.Seq) })
	return k.Findings
}

// Cut says how many findings were let go, by rule, most first; "" when
// none was.
func (k *Kept) Cut() string {
	if len(k.cut) == 0 {
		return ""
	}
	rules := make([]string, 0, len(k.cut))
	n := 0
	for r, c := range k.cut {
		rules = append(rules, r)
		n += c
	}
	slices.SortFunc(rules, func(a, b string) int {
		if d := k.cut[b] - k.cut[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "findings not shown: %d (", n)
	for i, r := range rules {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", r, k.cut[r])
	}
	fmt.Fprintf(&b, "); the first %d are kept", len(k.Findings))
	return b.String()
}
