package present

import (
	"fmt"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/clock"
	"github.com/tapedeck/tapedeck/internal/fingerprint"
)

// DriftLine spells a drift for a person, "" when nothing drifted.
func DriftLine(d *fingerprint.Drift) string {
	if d.None() {
		return ""
	}
	return fmt.Sprintf("drift since the recording: %s", d.Summary)
}

// TriageHeader is what show prints under a session's header line: the
// pinned clock and the fingerprint, when the session has them.
func TriageHeader(m *frame.Session) []string {
	var lines []string
	if m.Clock != nil {
		lines = append(lines, "clock        "+clock.Describe(m.Clock))
	}
	if m.Fingerprint != nil {
		lines = append(lines, "fingerprint  "+fingerprint.Describe(m.Fingerprint))
		for _, n := range m.Fingerprint.Notes {
			lines = append(lines, "             "+n)
		}
	}
	return lines
}
