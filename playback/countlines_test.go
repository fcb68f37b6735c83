package playback

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountLinesCountsFrameLines: countLines, which sizes the frames a tape
// is read into, counts the lines that start with "{" (across read
// buffers), not blank ones: 50 MB of blank lines after a tape cost no
// room for frames (they cost 64 bytes each, 3.2 GB, and a 400 MB flood
// failed at once with "runtime: out of memory").
func TestCountLinesCountsFrameLines(t *testing.T) {
	tape, err := os.ReadFile(filepath.Join("..", "testdata", "tapes", "hello-go.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	frames := strings.Count(string(tape), "\n{") + 1 // the header too
	flood := string(tape) + strings.Repeat("\n", 50<<20)
	n, err := countLines(strings.NewReader(flood))
	if err != nil || n != frames {
		t.Errorf("countLines of a tape and 50 MB of blank lines = %d, %v; want its %d lines", n, err, frames)
	}
	// A line that starts at the first byte of a read buffer is counted
	// once: lines of 1 KiB, so that some start there.
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("{" + strings.Repeat("x", 1022) + "\n")
	}
	if n, _ := countLines(strings.NewReader(b.String())); n != 1000 {
		t.Errorf("countLines of 1,000 lines of 1 KiB = %d", n)
	}
}
