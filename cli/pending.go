package cli

// Pending changes of golden tapes (NAME.jsonl.new), written by test --update
// and walked by review.

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// pendingSuffix marks a tape's pending change, written by test --update
// beside the tape and accepted or rejected by review.
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
