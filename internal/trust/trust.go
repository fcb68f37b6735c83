// Package trust owns the rule for what this user may trust on disk: a
// file or folder owned by root or by this user that no one else can
// write. The store applies it to its folders, doctor to what a launcher
// names; each says in its own words what to do about it.
package trust

import (
	"fmt"
	"os"
)

// OthersCanWrite reports whether group or others may write the file fi
// describes.
func OthersCanWrite(fi os.FileInfo) bool { return fi.Mode().Perm()&0o022 != 0 }

// Problem says why fi is not to be trusted, "" when it is: "owned by
// user N, neither root nor you (M)" or "writable by others (mode NNNN)".
func Problem(fi os.FileInfo) string {
	if owner, me, foreign := ForeignOwner(fi); foreign {
		return fmt.Sprintf("owned by user %d, neither root nor you (%d)", owner, me)
	}
	if OthersCanWrite(fi) {
		return fmt.Sprintf("writable by others (mode %04o)", fi.Mode().Perm())
	}
	return ""
}
