// Package recent owns what a stream reader keeps of what it has seen (a
// host request's method by its id) without growing with the stream: a map
// that remembers only its most recent keys, bounded in bytes too; the
// table of requests waiting for their answers built on it (Calls); and
// names and keys cut or hashed to a bound.
package recent

import "iter"

// Map maps keys to values, remembering at most its limit of keys and of
// bytes (each key's length and its value's size): once full, adding a new
// key forgets the oldest. A key set again is the newest: a request that
// reuses the id of one still waiting is the one its answer pairs with,
// and the last to be forgotten.
type Map[V any] struct {
	m        map[string]entry[V]
	order    []placed // keys by when they were put, oldest first; some deleted since
	gen      uint64
	limit    int
	maxBytes int
	size     func(V) int
	bytes    int // what the remembered keys and values take
}

type entry[V any] struct {
	v   V
	gen uint64 // which put of its key it is: a placed of another is stale
}

type placed struct {
	key string
	gen uint64
}

// New returns an empty map that remembers at most limit keys, taking at
// most maxBytes of keys and values as size measures a value (the newest
// key is kept even when it alone takes more). A stream's reader bounds
// both, since a crafted stream's keys can be as long as its lines.
func New[V any](limit, maxBytes int, size func(V) int) *Map[V] {
	return &Map[V]{m: map[string]entry[V]{}, limit: max(limit, 1), maxBytes: maxBytes, size: size}
}

// Put remembers v for key as the newest key, forgetting the oldest keys
// while the map holds more than it may.
func (r *Map[V]) Put(key string, v V) {
	if old, ok := r.m[key]; ok {
		r.bytes -= r.size(old.v) // its place in order goes stale
	} else {
		r.bytes += len(key)
	}
	r.gen++
	r.m[key] = entry[V]{v, r.gen}
	r.order = append(r.order, placed{key, r.gen})
	r.bytes += r.size(v)
	for len(r.m) > 1 && (len(r.m) > r.limit || r.bytes > r.maxBytes) {
		oldest := r.order[0]
		r.order[0] = placed{} // its key is not held by the array behind order
		r.order = r.order[1:]
		if e, ok := r.m[oldest.key]; ok && e.gen == oldest.gen {
			r.forget(oldest.key, e.v)
		}
	}
	r.sweep()
}

// Get returns the value remembered for key.
func (r *Map[V]) Get(key string) (V, bool) {
	e, ok := r.m[key]
	return e.v, ok
}

// Delete forgets key. What it leaves in the order of keys is swept once
// that order is twice what the map holds (see sweep).
func (r *Map[V]) Delete(key string) {
	e, ok := r.m[key]
	if !ok {
		return
	}
	r.forget(key, e.v)
	r.sweep()
}

// sweep drops the stale places (of keys deleted or set again since) once
// the order of keys is twice what the map holds.
func (r *Map[V]) sweep() {
	if len(r.order) <= 2*len(r.m)+64 {
		return
	}
	live := r.order[:0]
	for _, p := range r.order {
		if e, ok := r.m[p.key]; ok && e.gen == p.gen {
			live = append(live, p)
		}
	}
	clear(r.order[len(live):])
	r.order = live
}

func (r *Map[V]) forget(key string, v V) {
	delete(r.m, key)
	r.bytes -= len(key) + r.size(v)
}

// All yields every key remembered and its value, in no order.
func (r *Map[V]) All() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for k, e := range r.m {
			if !yield(k, e.v) {
				return
			}
		}
	}
}

// Len is the number of keys remembered.
func (r *Map[V]) Len() int { return len(r.m) }

// Bytes is what the remembered keys and values take, as New counts them.
func (r *Map[V]) Bytes() int { return r.bytes }
