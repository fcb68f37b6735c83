package frame

import (
	"testing"
	"unsafe"
)

// TestFrameSize: a Frame takes 64 bytes (96 with the event's name, signal
// and code as fields of their own, 104 with Dir and NoEOL apart): a replay
// holds two a line, the recording's and the live one, so that each byte
// here is 2 MB of a million-frame replay.
func TestFrameSize(t *testing.T) {
	if n := unsafe.Sizeof(Frame{}); unsafe.Sizeof(uintptr(0)) == 8 && n > 64 {
		t.Errorf("frame.Frame takes %d bytes, want at most 64", n)
	}
}
