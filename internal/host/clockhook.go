package host

import "github.com/tapedeck/tapedeck/frame"

// delivering tells Options.Delivering the recorded time of f, a recorded
// host line about to be written to the plugin (a host frame or a recorded
// answer), so that a pinned clock reads the recording's own time while
// the plugin works on it. Lines the recording did not have (default
// answers) tell nothing; the recorded time of a host script's lines is 0.
func (r *runner) delivering(f *frame.Frame) {
	if r.opts.Delivering != nil && f != nil && !r.closed {
		r.opts.Delivering(f.At)
	}
}
