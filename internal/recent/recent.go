// Package recent owns what a stream reader keeps of what it has seen (a
// host request's method by its id) without growing with the stream: a map
// that remembers only its most recent keys, bounded in bytes too, and
// names and keys cut or hashed to a bound.
package recent

// Map maps keys to values, remembering at most its limit of keys and of
// bytes (each key's length and its value's size): once full, adding a new
// key forgets the oldest. A key set again keeps its place.
type Map[V any] struct {
	m        map[string]V
	order    []string // keys, oldest first
	limit    int
	maxBytes int
	size     func(V) int
	bytes    int // what the remembered keys and values take
}

// New returns an empty map that remembers at most limit keys, taking at
// most maxBytes of keys and values as size measures a value (the newest
// key is kept even when it alone takes more). A stream's reader bounds
// both, since a crafted stream's keys can be as long as its lines.
func New[V any](limit, maxBytes int, size func(V) int) *Map[V] {
	return &Map[V]{m: map[string]V{}, limit: max(limit, 1), maxBytes: maxBytes, size: size}
}

// Put remembers v for key, forgetting the oldest keys while the map holds
// more than it may.
func (r *Map[V]) Put(key string, v V) {
	if old, ok := r.m[key]; ok {
		r.bytes -= r.size(old)
	} else {
		r.order = append(r.order, key)
		r.bytes += len(key)
	}
	r.m[key], r.bytes = v, r.bytes+r.size(v)
	for len(r.order) > 1 && (len(r.order) > r.limit || r.bytes > r.maxBytes) {
		oldest := r.order[0]
		r.order = r.order[1:]
		r.bytes -= len(oldest) + r.size(r.m[oldest])
		delete(r.m, oldest)
	}
}

// Get returns the value remembered for key.
func (r *Map[V]) Get(key string) (V, bool) {
	v, ok := r.m[key]
	return v, ok
}

// Len is the number of keys remembered.
func (r *Map[V]) Len() int { return len(r.m) }

// Bytes is what the remembered keys and values take, as New counts them.
func (r *Map[V]) Bytes() int { return r.bytes }
