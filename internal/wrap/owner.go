package wrap

import (
	"os"

	"github.com/tapedeck/tapedeck/internal/trust"
)

// foreignOwner says why the file at path (links resolved) is not one this
// user may trust to run: owned by someone but root and this user, or
// writable by others (trust.Problem). "" means it may be run.
func foreignOwner(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return bare(err).Error()
	}
	return trust.Problem(fi)
}
