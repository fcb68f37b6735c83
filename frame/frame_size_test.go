package frame

import (
	"testing"
	"unsafe"
)

// TestFrameIs64Bytes: a replay holds two frames a line, so a frame's size
// is a third of what a big tape's replay takes; 96 bytes before.
func TestFrameIs64Bytes(t *testing.T) {
	if n := unsafe.Sizeof(Frame{}); n != 64 && unsafe.Sizeof(uintptr(0)) == 8 {
		t.Fatalf("frame.Frame takes %d bytes, want 64", n)
	}
}
