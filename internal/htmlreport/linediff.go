package htmlreport

import "strings"

// diffLine is one row of two texts shown side by side: a line of each
// (0 and "" where a side has none) and how they differ.
type diffLine struct {
	Op string `json:"o"` // "=" same, "~" changed, "-" only recorded, "+" only replayed
	A  int    `json:"a,omitempty"`
	L  string `json:"l,omitempty"`
	B  int    `json:"b,omitempty"`
	R  string `json:"r,omitempty"`
}

// maxCells bounds the table of the line alignment (rows × columns of the
// part that differs); past it the differing part is shown as all changed.
const maxCells = 1 << 22

// lineDiff aligns the lines of a and b: lines common to both (a longest
// common subsequence) face each other; between them, removed and added
// lines are paired as changed, and the rest face a gap.
func lineDiff(a, b string) []diffLine {
	la, lb := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(la) && pre < len(lb) && la[pre] == lb[pre] {
		pre++
	}
	suf := 0
	for suf < len(la)-pre && suf < len(lb)-pre && la[len(la)-1-suf] == lb[len(lb)-1-suf] {
		suf++
	}
	ops := make([]byte, 0, len(la)+len(lb))
	for range pre {
		ops = append(ops, '=')
	}
	ops = append(ops, lcs(la[pre:len(la)-suf], lb[pre:len(lb)-suf])...)
	for range suf {
		ops = append(ops, '=')
	}

	var out []diffLine
	i, j := 0, 0
	for k := 0; k < len(ops); {
		if ops[k] == '=' {
			out = append(out, diffLine{Op: "=", A: i + 1, L: la[i], B: j + 1, R: lb[j]})
			i, j, k = i+1, j+1, k+1
			continue
		}
		var dels, adds int
		for ; k < len(ops) && ops[k] != '='; k++ {
			if ops[k] == '-' {
				dels++
			} else {
				adds++
			}
		}
		for n := 0; n < max(dels, adds); n++ {
			row := diffLine{Op: "~"}
			if n < dels {
				row.A, row.L = i+1, la[i]
				i++
			} else {
				row.Op = "+"
			}
			if n < adds {
				row.B, row.R = j+1, lb[j]
				j++
			} else {
				row.Op = "-"
			}
			out = append(out, row)
		}
	}
	return out
}

// lcs returns the edit script from a to b: '=' keep, '-' remove from a,
// '+' add from b.
func lcs(a, b []string) []byte {
	if len(a) == 0 || len(b) == 0 || len(a)*len(b) > maxCells {
		ops := make([]byte, 0, len(a)+len(b))
		for range a {
			ops = append(ops, '-')
		}
		for range b {
			ops = append(ops, '+')
		}
		return ops
	}
	// n[i][j] is the length of the LCS of a[i:] and b[j:].
	w := len(b) + 1
	n := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				n[i*w+j] = n[(i+1)*w+j+1] + 1
			} else {
				n[i*w+j] = max(n[(i+1)*w+j], n[i*w+j+1])
			}
		}
	}
	ops := make([]byte, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, '=')
			i, j = i+1, j+1
		case n[(i+1)*w+j] >= n[i*w+j+1]:
			ops = append(ops, '-')
			i++
		default:
			ops = append(ops, '+')
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, '-')
	}
	for ; j < len(b); j++ {
		ops = append(ops, '+')
	}
	return ops
}

// splitLines splits s into lines without their "\n"; "" has none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
