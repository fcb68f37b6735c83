package cli

// test --shard: which tapes one of N jobs runs.

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
)

// parseShard reads K/N (1 ≤ K ≤ N); 1/1 when empty.
func parseShard(s string) (k, n int, err error) {
	if s == "" {
		return 1, 1, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != s {
		return 0, 0, fmt.Errorf("--shard %q: want K/N with 1 ≤ K ≤ N, for example 2/4", s)
	}
	return k, n, nil
}

// shard keeps the tapes of shard k of n: a tape's shard follows from its
// path alone (FNV-1a), so adding a tape never moves the others.
func shard(tapes []string, k, n int) []string {
	if n == 1 {
		return tapes
	}
	var out []string
	for _, t := range tapes {
		h := fnv.New32a()
		h.Write([]byte(filepath.ToSlash(filepath.Clean(t))))
		if int(h.Sum32()%uint32(n)) == k-1 {
			out = append(out, t)
		}
	}
	return out
}
