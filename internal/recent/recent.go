// Package recent owns a map that remembers only its most recent keys: what
// a stream reader keeps of what it has seen (a host request's method by
// its id) without growing with the stream.
package recent

// Map maps keys to values, remembering at most its capacity of keys: once full, adding
// a new key forgets the oldest. A key set again keeps its place.
type Map[V any] struct {
	m     map[string]V
	order []string // keys, oldest first
	limit int
}

// New returns an empty map that remembers at most capacity keys.
func New[V any](capacity int) *Map[V] {
	return &Map[V]{m: map[string]V{}, limit: max(capacity, 1)}
}

// Put remembers v for key, forgetting the oldest key when the map is full.
func (r *Map[V]) Put(key string, v V) {
	if _, ok := r.m[key]; !ok {
		if len(r.order) >= r.limit {
			delete(r.m, r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, key)
	}
	r.m[key] = v
}

// Get returns the value remembered for key.
func (r *Map[V]) Get(key string) (V, bool) {
	v, ok := r.m[key]
	return v, ok
}

// Len is the number of keys remembered.
func (r *Map[V]) Len() int { return len(r.m) }
