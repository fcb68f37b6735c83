//go:build !unix

package wrap

// foreignOwner: where files have no Unix owner, nothing to say.
func foreignOwner(string) string { return "" }
