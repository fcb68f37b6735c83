package recent

import "iter"

// MaxCalls and MaxCallBytes bound a table of requests waiting for their
// answers: a session full of requests never answered, or of ids and
// methods as long as its lines, costs no more (65,536 requests naming
// 2 kB methods had held 270 MB in an export, 400,000 held 422 MB in a
// report). Real traffic reaches the number first: 65,536 methods of 60
// bytes take 4 MiB.
const (
	MaxCalls     = 1 << 16
	MaxCallBytes = 8 << 20
)

// Calls are a session's requests waiting for their answers, each by the
// side that sent it and its id (Pair), the most recent MaxCalls of them:
// an answer takes its request. A request that reuses the id of one still
// waiting takes its place (Map.Put).
type Calls[V any] struct{ m *Map[V] }

// NewCalls returns an empty table whose values size measures.
func NewCalls[V any](size func(V) int) *Calls[V] {
	return &Calls[V]{New(MaxCalls, MaxCallBytes, size)}
}

// Asked remembers v for the request side sent with id.
func (c *Calls[V]) Asked(side byte, id string, v V) { c.m.Put(Pair(side, id), v) }

// Answered takes what was remembered for the request side sent with id.
func (c *Calls[V]) Answered(side byte, id string) (V, bool) {
	k := Pair(side, id)
	v, ok := c.m.Get(k)
	if ok {
		c.m.Delete(k)
	}
	return v, ok
}

// All yields every request waiting, by its key (Pair), in no order.
func (c *Calls[V]) All() iter.Seq2[string, V] { return c.m.All() }
