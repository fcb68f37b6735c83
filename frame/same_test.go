package frame

import "testing"

// TestSame: two frames are the same when everything but their seq and
// time is; each field on its own makes them differ.
func TestSame(t *testing.T) {
	zero, one := 0, 1
	base := func() Frame {
		f := Frame{Seq: 3, At: 10, Dir: Out, Raw: []byte(`{"a":1}`)}
		return f
	}
	a := base()
	b := base()
	b.Seq, b.At = 9, 99
	if !a.Same(&b) {
		t.Error("seq and time made two frames differ")
	}
	for name, change := range map[string]func(*Frame){
		"dir":   func(f *Frame) { f.Dir = Err },
		"bytes": func(f *Frame) { f.Raw = []byte(`{"a":2}`) },
		"eol":   func(f *Frame) { f.NoEOL = true },
		"cut":   func(f *Frame) { f.Cut = &Cut{Len: 99} },
		"event": func(f *Frame) { f.Event = EventEOF },
		"exit":  func(f *Frame) { *f = f.WithEnd("", &one) },
	} {
		b := base()
		change(&b)
		if a.Same(&b) || b.Same(&a) {
			t.Errorf("%s: still the same", name)
		}
	}
	x, y := Frame{Event: EventExit}.WithEnd("", &zero), Frame{Event: EventExit}.WithEnd("", &one)
	if x.Same(&y) {
		t.Error("exit codes 0 and 1 are the same")
	}
	s, u := Frame{Event: EventExit}.WithEnd("SIGKILL", nil), Frame{Event: EventExit}.WithEnd("SIGTERM", nil)
	if s.Same(&u) || !s.Same(&s) {
		t.Error("signals compare wrong")
	}
	c1, c2 := base(), base()
	c1.Cut, c2.Cut = &Cut{Len: 99}, &Cut{Len: 100}
	if c1.Same(&c2) {
		t.Error("cuts of different lengths are the same")
	}
}
