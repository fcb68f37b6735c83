package cli

import (
	"fmt"
	"strings"

	"github.com/tapedeck/tapedeck/render"
)

// pendingHint is the line that says how many changes are pending and the
// review command that walks them (review takes the paths given).
func pendingHint(changes int, paths []string) string {
	return fmt.Sprintf("tapedeck: %s pending: look at each and accept or reject it with: %s",
		render.Count(int64(changes), "change", "changes"), strings.Join(append([]string{"tapedeck review"}, paths...), " "))
}
