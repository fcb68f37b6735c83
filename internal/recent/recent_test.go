package recent

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestMapForgetsTheOldest(t *testing.T) {
	t.Parallel()
	r := New(3, 1<<20, func(int) int { return 8 })
	for i := range 5 {
		r.Put(strconv.Itoa(i), i)
	}
	r.Put("3", 33) // set again: the newest
	for k, want := range map[string]int{"2": 2, "3": 33, "4": 4} {
		if v, ok := r.Get(k); !ok || v != want {
			t.Errorf("Get(%s) = %d, %v; want %d", k, v, ok, want)
		}
	}
	for _, k := range []string{"0", "1"} {
		if _, ok := r.Get(k); ok {
			t.Errorf("Get(%s) still found: the oldest keys must go", k)
		}
	}
	r.Put("5", 5)
	if _, ok := r.Get("2"); ok || r.Len() != 3 {
		t.Errorf("after one more key: %q still found or %d keys, want it gone and 3", "2", r.Len())
	}
}

// TestPutAgainTakesTheNewestPlace: a key put again is the newest, and
// outlives the keys put between (it kept its first place, and went
// first); putting one key again and again keeps the order of keys small.
func TestPutAgainTakesTheNewestPlace(t *testing.T) {
	t.Parallel()
	r := New(2, 1<<20, func(int) int { return 8 })
	r.Put("a", 1)
	r.Put("b", 2)
	r.Put("a", 3)
	r.Put("c", 4)
	if v, ok := r.Get("a"); !ok || v != 3 {
		t.Errorf("Get(a) = %d, %v; want 3, the newest", v, ok)
	}
	if _, ok := r.Get("b"); ok {
		t.Error("b is still found: it was the oldest")
	}
	if r.Len() != 2 || r.Bytes() != 2*(1+8) {
		t.Errorf("%d keys of %d bytes, want 2 of 18", r.Len(), r.Bytes())
	}
	for i := range 1_000_000 {
		r.Put("c", i)
	}
	if len(r.order) > 2*r.Len()+64 || r.Bytes() != 2*(1+8) {
		t.Errorf("a million puts of one key left %d places for %d keys, %d bytes", len(r.order), r.Len(), r.Bytes())
	}
}

// TestMapStaysSmall puts a million keys through a map of 1,000: what it
// holds must not grow with them.
func TestMapStaysSmall(t *testing.T) {
	r := New(1000, 1<<20, func(v string) int { return len(v) })
	var before, after runtime.MemStats
	for i := range 100000 {
		r.Put(strconv.Itoa(i), "m")
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 100000; i < 1100000; i++ {
		r.Put(strconv.Itoa(i), "m")
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("a million more keys grew the heap %d bytes: want it bounded (under 1 MiB)", grew)
	}
	if r.Len() != 1000 {
		t.Errorf("Len() = %d, want 1000", r.Len())
	}
}

// TestMapBoundsItsBytes: keys as long as a crafted stream's lines are
// forgotten by their bytes, not only by their count; the newest is kept
// even when it alone takes more.
func TestMapBoundsItsBytes(t *testing.T) {
	t.Parallel()
	r := New(1000, 10<<10, func(v string) int { return len(v) })
	long := strings.Repeat("k", 1000)
	for i := range 100 {
		r.Put(long+strconv.Itoa(i), "v")
	}
	if r.Bytes() > 10<<10 || r.Len() > 10 || r.Len() < 9 {
		t.Errorf("100 keys of 1 kB in a map of 10 kB: %d keys, %d bytes; want 9 or 10, at most 10 kB", r.Len(), r.Bytes())
	}
	if _, ok := r.Get(long + "99"); !ok {
		t.Error("the newest key was forgotten")
	}
	r.Put("big", strings.Repeat("v", 20<<10))
	if v, ok := r.Get("big"); !ok || len(v) != 20<<10 || r.Len() != 1 {
		t.Errorf("a value larger than the map: kept %v, %d keys; want it kept alone", ok, r.Len())
	}
	r.Put("big", "small") // set again: its bytes are counted anew
	if r.Bytes() != len("big")+len("small") {
		t.Errorf("Bytes() = %d after a value shrank, want %d", r.Bytes(), len("big")+len("small"))
	}
}

// TestMapDelete: a key deleted and put again is as new (the old place it
// left does not make it go first), and deleting as much as is put keeps
// the map's order of keys small.
func TestMapDelete(t *testing.T) {
	t.Parallel()
	r := New(2, 1<<20, func(int) int { return 8 })
	r.Put("a", 1)
	r.Delete("a")
	r.Put("b", 2)
	r.Put("a", 3)
	r.Put("c", 4) // the oldest now is b
	if _, ok := r.Get("b"); ok {
		t.Error("b is still remembered: the stale place of a went first")
	}
	if v, ok := r.Get("a"); !ok || v != 3 {
		t.Errorf("Get(a) = %d, %v; want 3", v, ok)
	}
	if r.Bytes() != 2*(1+8) {
		t.Errorf("Bytes() = %d, want %d", r.Bytes(), 2*(1+8))
	}
	for i := range 1_000_000 {
		k := strconv.Itoa(i)
		r.Put(k, i)
		r.Delete(k)
	}
	if len(r.order) > 2*r.Len()+64 {
		t.Errorf("a million puts and deletes left %d places for %d keys", len(r.order), r.Len())
	}
}
