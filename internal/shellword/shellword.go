// Package shellword quotes a string as one sh word, for the commands
// tapedeck writes (the launcher) and prints as advice, so that a path with
// a space or a quote in it runs as printed. It owns that quoting and
// nothing else: the standard library alone.
package shellword

import "strings"

// Quote quotes s as one sh word. Inside single quotes every byte is
// literal; a single quote in s becomes close quote, escaped quote, open
// quote:
//
//	it's  →  'it'\''s'
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
