package wrap

import (
	"slices"
	"testing"
)

// TestLauncherPinClockReadsBack: a launcher that records with --pin-clock
// parses back to the same Launch, and its Argv has the flag before "--".
func TestLauncherPinClockReadsBack(t *testing.T) {
	l := &Launch{Tapedeck: "/t", Store: "/s", Name: "p", Command: []string{"/n", "/m"}, PinClock: true}
	got, err := ParseLauncher(l.Script())
	if err != nil {
		t.Fatalf("ParseLauncher: %v\n%s", err, l.Script())
	}
	if !got.PinClock || !slices.Equal(got.Command, l.Command) || got.Name != "p" {
		t.Errorf("ParseLauncher = %+v, want %+v", got, l)
	}
	if want := []string{"/t", "--store", "/s", "record", "--name", "p", "--pin-clock", "--", "/n", "/m"}; !slices.Equal(l.Argv(), want) {
		t.Errorf("Argv = %q, want %q", l.Argv(), want)
	}
}
