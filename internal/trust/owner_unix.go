//go:build unix

package trust

import (
	"os"
	"syscall"
)

// ForeignOwner reports the owner of the file fi describes and this
// (effective) user, and whether the owner is neither root nor this user.
func ForeignOwner(fi os.FileInfo) (owner, me int, foreign bool) {
	me = os.Geteuid()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return me, me, false
	}
	owner = int(st.Uid)
	return owner, me, owner != 0 && owner != me
}
