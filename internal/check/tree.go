package check

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The host's limits on a UI tree.
const (
	maxElements = 2000  // every element, and everything an element holds
	maxDepth    = 12    // levels below the root
	maxString   = 20000 // characters in one string
	// maxTreeNotes bounds the warnings of one kind reported for one tree.
	maxTreeNotes = 10
	// schemaDepth: a tree whose elements nest deeper than this is not
	// validated against the schemas. The host rejects it for its depth
	// alone (ui-too-deep says so), and the validator's cost grows with the
	// square of the depth: a 3 MB session of trees 4,990 deep took 27 s.
	schemaDepth = 4 * maxDepth
)

// treeWalk is one pass over a UI tree for the rules that are code: the
// element count, the depth, long strings and duplicate ids. It keeps the
// path to where it is as a stack of segments and spells it only for an
// issue, so the walk is linear in the tree's size however deep it nests
// (spelling every path would be quadratic in the depth). An id's place is
// kept the same way, for the duplicate that may come later: as a node of
// a tree of the steps taken (pin), spelled only when a duplicate is
// reported (a 535 KB tree nesting ids under long member names had taken
// 1.5 GB when every id's path was spelled).
type treeWalk struct {
	count   int
	tooMany bool
	tooDeep bool
	deepest int // the deepest element's depth
	strs    int
	dups    int
	ids     map[string]int // element id → node of its first element (pin)
	out     []issue
	prefix  string
	segs    []seg
	nodes   []node // the steps pinned so far
}

// seg is one step of a path: a member name, or an index when key is "".
// node is the step's index in treeWalk.nodes once it is pinned, else -1.
type seg struct {
	key   string
	index int
	node  int
}

// node is a pinned step of a path: the step, and the index in
// treeWalk.nodes of the step before it (-1 for the first).
type node struct {
	step   seg
	parent int
}

func (w *treeWalk) push(s seg) { s.node = -1; w.segs = append(w.segs, s) }
func (w *treeWalk) pop()       { w.segs = w.segs[:len(w.segs)-1] }

// pin returns a node that stands for where the walk is, for pathAt to
// spell later: -1 at the root. Each step of the path is pinned once while
// it is on the stack, so pinning costs no more than the walk itself.
func (w *treeWalk) pin() int {
	i := len(w.segs)
	for i > 0 && w.segs[i-1].node < 0 {
		i--
	}
	for ; i < len(w.segs); i++ {
		parent := -1
		if i > 0 {
			parent = w.segs[i-1].node
		}
		w.nodes = append(w.nodes, node{step: w.segs[i], parent: parent})
		w.segs[i].node = len(w.nodes) - 1
	}
	if len(w.segs) == 0 {
		return -1
	}
	return w.segs[len(w.segs)-1].node
}

// pathAt spells the path pin returned n for.
func (w *treeWalk) pathAt(n int) string {
	var steps []seg
	for ; n >= 0; n = w.nodes[n].parent {
		steps = append(steps, w.nodes[n].step)
	}
	for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
		steps[i], steps[j] = steps[j], steps[i]
	}
	return w.spell(steps)
}

// path spells where the walk is, as jsonPath does.
func (w *treeWalk) path() string { return w.spell(w.segs) }

// spell spells the path of steps below the walk's prefix, as jsonPath does.
func (w *treeWalk) spell(steps []seg) string {
	var b strings.Builder
	b.WriteString(w.prefix)
	for _, s := range steps {
		switch {
		case s.key == "":
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case identifier(s.key):
			b.WriteString("." + s.key)
		default:
			q, _ := json.Marshal(s.key)
			b.WriteString("[" + string(q) + "]")
		}
	}
	return b.String()
}

// treeIssues checks the UI tree v, found at path, and returns the issues
// and the depth of its deepest element.
//
// Counting follows the host: every element counts, and so does everything
// an element holds — every entry of every array inside it (list items and
// their actions, options, table rows and their cells, …). An element is an
// object with a string "type" reached from its parent through any members
// and arrays; it sits one level below that parent.
func treeIssues(v any, path string) ([]issue, int) {
	if _, ok := typeOf(v); !ok {
		return nil, 0 // the schema reports a root that is not an element
	}
	w := &treeWalk{ids: map[string]int{}, prefix: path}
	w.element(v.(map[string]any), 0)
	return w.out, w.deepest
}

func (w *treeWalk) element(obj map[string]any, depth int) {
	w.tally()
	w.deepest = max(w.deepest, depth)
	if depth > maxDepth && !w.tooDeep {
		w.tooDeep = true
		w.out = append(w.out, issue{RuleUITooDeep, w.path(),
			fmt.Sprintf("this element is %d levels below the root, more than %d", depth, maxDepth)})
	}
	if id, ok := obj["id"].(string); ok {
		if first, dup := w.ids[id]; dup {
			w.dup(func() string {
				return fmt.Sprintf("id %q is also the id of the element at %s", id, w.pathAt(first))
			})
		} else {
			w.ids[id] = w.pin()
		}
	}
	w.members(obj, depth)
}

// members walks what an element (or an object it holds) contains.
func (w *treeWalk) members(obj map[string]any, depth int) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.push(seg{key: k})
		w.held(obj[k], depth)
		w.pop()
	}
}

// held walks a value inside the element at depth.
func (w *treeWalk) held(v any, depth int) {
	switch x := v.(type) {
	case string:
		if n := utf8.RuneCountInString(x); n > maxString && w.strs < maxTreeNotes {
			w.strs++
			w.out = append(w.out, issue{RuleUIStringCut, w.path(),
				fmt.Sprintf("a string of %d characters, more than %d", n, maxString)})
		}
	case map[string]any:
		if _, ok := typeOf(x); ok {
			w.element(x, depth+1)
			return
		}
		w.members(x, depth)
	case []any:
		var siblings map[string]int // id → node of its first entry
		for i, e := range x {
			w.push(seg{index: i})
			if obj, ok := e.(map[string]any); ok {
				if _, ok := typeOf(obj); ok {
					w.element(obj, depth+1)
					w.pop()
					continue
				}
				// An entry such as a list item: ids are unique among siblings.
				if id, ok := obj["id"].(string); ok {
					if siblings == nil {
						siblings = map[string]int{}
					}
					if first, dup := siblings[id]; dup {
						w.dup(func() string {
							return fmt.Sprintf("id %q is also the id of %s", id, w.pathAt(first))
						})
					} else {
						siblings[id] = w.pin()
					}
				}
			}
			w.tally()
			w.held(e, depth)
			w.pop()
		}
	}
}

// tally counts one element or held entry where the walk is.
func (w *treeWalk) tally() {
	w.count++
	if w.count > maxElements && !w.tooMany {
		w.tooMany = true
		w.out = append(w.out, issue{RuleUITooMany, w.path(),
			fmt.Sprintf("the tree has more than %d elements, counted the host's way; element %d is here", maxElements, w.count)})
	}
}

// dup reports a duplicate id where the walk is, msg spelling it, while
// fewer than maxTreeNotes have been reported; msg runs only then.
func (w *treeWalk) dup(msg func() string) {
	if w.dups < maxTreeNotes {
		w.dups++
		w.out = append(w.out, issue{RuleUIDuplicateID, w.path(), msg()})
	}
}
