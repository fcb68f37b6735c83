package recent

import (
	"runtime"
	"strconv"
	"testing"
)

func TestMapForgetsTheOldest(t *testing.T) {
	t.Parallel()
	r := New[int](3)
	for i := range 5 {
		r.Put(strconv.Itoa(i), i)
	}
	r.Put("3", 33) // set again: keeps its place
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

// TestMapStaysSmall puts a million keys through a map of 1,000: what it
// holds must not grow with them.
func TestMapStaysSmall(t *testing.T) {
	r := New[string](1000)
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
