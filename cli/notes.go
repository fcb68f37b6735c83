package cli

// What a recording stores beside its frames (record writes it, show reads
// it).

import "github.com/tapedeck/tapedeck/check"

// sessionNotes is what a recording stores about its frames beside them.
type sessionNotes struct {
	Findings []check.Finding `json:"findings"`
}
