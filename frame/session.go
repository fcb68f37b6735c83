package frame

import (
	"crypto/rand"
	"fmt"
	"time"
)

// End is what a recording knows only when it ends.
type End struct {
	Ended  time.Time `json:"ended"`
	Status string    `json:"status"`
	Exit   Exit      `json:"exit"`
	Lost   *Lost     `json:"lost,omitempty"`
	Error  string    `json:"error,omitempty"`
	// Fingerprint is taken while the plugin runs, so it comes at the end.
	Fingerprint *Fingerprint `json:"fingerprint,omitempty"`
	// ClockMissed: the session's clock was to be pinned, and no process of
	// the plugin loaded the pin (see Clock.Missed).
	ClockMissed bool `json:"clockMissed,omitempty"`
}

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns a session id: 26 characters of Crockford base32, the first
// ten encoding the start time in milliseconds, so ids sort by time and a
// short prefix names a session.
func NewID(t time.Time) string {
	var b [26]byte
	ms := uint64(t.UnixMilli())
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	var r [16]byte
	rand.Read(r[:])
	for i := 10; i < 26; i++ {
		b[i] = crockford[r[i-10]&31]
	}
	return string(b[:])
}

var signalNames = [...]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
	7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2",
	13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 17: "SIGCHLD", 18: "SIGCONT",
	19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 24: "SIGXCPU",
	25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH",
}

// SignalName spells a Linux signal number the way tapes do ("SIGTERM").
func SignalName(n int) string {
	if n > 0 && n < len(signalNames) && signalNames[n] != "" {
		return signalNames[n]
	}
	return fmt.Sprintf("SIG%d", n)
}

// SignalNumber is the inverse of SignalName; 0 when the name is unknown.
func SignalNumber(name string) int {
	for n, s := range signalNames {
		if s == name && s != "" {
			return n
		}
	}
	var n int
	if _, err := fmt.Sscanf(name, "SIG%d", &n); err == nil {
		return n
	}
	return 0
}
