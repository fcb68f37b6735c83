//go:build !linux

package child

// Writing is nil outside Linux: there is no /proc to read which files a
// process holds open.
func Writing(pid int, dir string) []string { return nil }
