package cli

// Pending changes of golden tapes (NAME.jsonl.new), written by test --update
// and replay --update, and walked by review.

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tapedeck/tapedeck/golden"
)

// pendingSuffix marks a tape's pending change, written by test --update
// and replay --update beside the tape and accepted or rejected by review.
const pendingSuffix = ".new"

// findPending lists the pending changes under paths (a path may also name a
// tape or its pending file), sorted.
func findPending(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil && strings.HasSuffix(p, ".jsonl") {
			if _, err := os.Stat(p + pendingSuffix); err == nil {
				add(p + pendingSuffix)
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !fi.IsDir() {
			switch {
			case strings.HasSuffix(p, ".jsonl"+pendingSuffix):
				add(p)
			default:
				if _, err := os.Stat(p + pendingSuffix); err == nil {
					add(p + pendingSuffix)
				}
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != p) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".jsonl"+pendingSuffix) {
				add(path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find pending changes in %s: %w", p, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

// writePending writes the live run of a replay that differed beside its tape as
// NAME.jsonl.new (changing nothing else); "" when there is nothing to write.
func writePending(o *outcome) (string, error) {
	if o.src.tape == nil {
		return "", nil
	}
	data, err := golden.Update(o.src.tape, golden.Replay{Live: o.run.Live, Pairs: o.run.Pairs, Sent: o.run.Sent}, o.diff, golden.Options{Stderr: o.dopts.CompareStderr})
	if err != nil || data == nil {
		return "", err
	}
	path := o.src.tapePath + pendingSuffix
	err = writeFileAtomic(path, func(w io.Writer) error { _, err := w.Write(data); return err })
	return path, err
}

// pendingHint is the line that says how many changes are pending and the
// review command that walks them (review takes the paths given).
func pendingHint(changes int, paths []string) string {
	return fmt.Sprintf("tapedeck: %s pending: look at each and accept or reject it with: %s",
		nounCount(int64(changes), "change", "changes"), strings.Join(append([]string{"tapedeck review"}, paths...), " "))
}
