//go:build unix

package wrap

import (
	"fmt"
	"os"
	"syscall"
)

// foreignOwner says why the file at path (links resolved) is not one this
// user may trust to run: owned by someone but root and this user, or
// writable by others. "" means it may be run.
func foreignOwner(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return bare(err).Error()
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if uid := os.Geteuid(); st.Uid != 0 && int(st.Uid) != uid {
		return fmt.Sprintf("owned by user %d, neither root nor you (%d)", st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("writable by others (mode %04o)", fi.Mode().Perm())
	}
	return ""
}
