package check

import (
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// The host's limits on a UI tree.
const (
	maxElements = 2000  // every element, and everything an element holds
	maxDepth    = 12    // levels below the root
	maxString   = 20000 // characters in one string
	// maxTreeNotes bounds the warnings of one kind reported for one tree.
	maxTreeNotes = 10
)

// treeWalk is one pass over a UI tree for the rules that are code: the
// element count, the depth, long strings and duplicate ids.
type treeWalk struct {
	count   int
	tooMany bool
	tooDeep bool
	strs    int
	dups    int
	ids     map[string]string // element id → path of its first element
	out     []issue
}

// treeIssues checks the UI tree v, found at path.
//
// Counting follows the host: every element counts, and so does everything
// an element holds — every entry of every array inside it (list items and
// their actions, options, table rows and their cells, …). An element is an
// object with a string "type" reached from its parent through any members
// and arrays; it sits one level below that parent.
func treeIssues(v any, path string) []issue {
	if _, ok := typeOf(v); !ok {
		return nil // the schema reports a root that is not an element
	}
	w := &treeWalk{ids: map[string]string{}}
	w.element(v.(map[string]any), path, 0)
	return w.out
}

func (w *treeWalk) element(obj map[string]any, path string, depth int) {
	w.tally(path)
	if depth > maxDepth && !w.tooDeep {
		w.tooDeep = true
		w.out = append(w.out, issue{RuleUITooDeep, path,
			fmt.Sprintf("this element is %d levels below the root, more than %d", depth, maxDepth)})
	}
	if id, ok := obj["id"].(string); ok {
		if first, dup := w.ids[id]; dup {
			w.dup(path, fmt.Sprintf("id %q is also the id of the element at %s", id, first))
		} else {
			w.ids[id] = path
		}
	}
	w.members(obj, path, depth)
}

// members walks what an element (or an object it holds) contains.
func (w *treeWalk) members(obj map[string]any, path string, depth int) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.held(obj[k], jsonPath(path, obj, []string{k}), depth)
	}
}

// held walks a value inside the element at depth.
func (w *treeWalk) held(v any, path string, depth int) {
	switch x := v.(type) {
	case string:
		if n := utf8.RuneCountInString(x); n > maxString && w.strs < maxTreeNotes {
			w.strs++
			w.out = append(w.out, issue{RuleUIStringCut, path,
				fmt.Sprintf("a string of %d characters, more than %d", n, maxString)})
		}
	case map[string]any:
		if _, ok := typeOf(x); ok {
			w.element(x, path, depth+1)
			return
		}
		w.members(x, path, depth)
	case []any:
		siblings := map[string]string{}
		for i, e := range x {
			p := path + "[" + strconv.Itoa(i) + "]"
			if obj, ok := e.(map[string]any); ok {
				if _, ok := typeOf(obj); ok {
					w.element(obj, p, depth+1)
					continue
				}
				// An entry such as a list item: ids are unique among siblings.
				if id, ok := obj["id"].(string); ok {
					if first, dup := siblings[id]; dup {
						w.dup(p, fmt.Sprintf("id %q is also the id of %s", id, first))
					} else {
						siblings[id] = p
					}
				}
			}
			w.tally(p)
			w.held(e, p, depth)
		}
	}
}

// tally counts one element or held entry at path.
func (w *treeWalk) tally(path string) {
	w.count++
	if w.count > maxElements && !w.tooMany {
		w.tooMany = true
		w.out = append(w.out, issue{RuleUITooMany, path,
			fmt.Sprintf("the tree has more than %d elements, counted the host's way; element %d is here", maxElements, w.count)})
	}
}

func (w *treeWalk) dup(path, msg string) {
	if w.dups < maxTreeNotes {
		w.dups++
		w.out = append(w.out, issue{RuleUIDuplicateID, path, msg})
	}
}
