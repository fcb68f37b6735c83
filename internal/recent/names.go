package recent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// MaxName is how long a name or key a stream reader keeps may be: a
// crafted stream's methods and ids can be as long as its lines (100,000
// unanswered requests naming 2 kB methods had held 213 MB in check).
const MaxName = 64

// Name is a name (a method) as a stream reader keeps it to say later: a
// copy of it, cut to MaxName bytes (Cut).
func Name(s string) string { return Cut(s, MaxName) }

// Cut is a copy of s cut to n bytes at a character's start, with "…"
// when it was longer.
func Cut(s string, n int) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…" // a new string: the long one is not held
}

// Pair is what a request is remembered by, to pair its answer with it:
// the side that sent it (a small number: a direction) and its id (Key).
func Pair(side byte, id string) string {
	return string(rune('0'+side)) + Key(id)
}

// Key is a key (an id's spelling) as a stream reader keeps it to match
// another by: itself when it is at most MaxName bytes, else "#" and a
// hash of it (no spelling of MaxName bytes or fewer starts so and is that
// long, so the two kinds never meet).
func Key(s string) string {
	if len(s) <= MaxName {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "#" + hex.EncodeToString(sum[:16])
}
