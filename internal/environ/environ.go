// Package environ owns a process environment held as a list of
// "KEY=value" strings, as os.Environ and exec.Cmd.Env hold it: reading a
// variable and setting one. It knows nothing of what the variables mean.
package environ

import "strings"

// Lookup is the value of key in env and whether env sets it; the last
// setting wins, as it does for a process started with env.
func Lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, found := strings.Cut(env[i], "="); found && k == key {
			return v, true
		}
	}
	return "", false
}

// Set is a copy of env with key set to value and every earlier setting of
// key removed; env itself is not changed.
func Set(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
