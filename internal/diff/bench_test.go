package diff

import (
	"fmt"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// BenchmarkFramesAllDiffer compares 20,000, 40,000 and 80,000 frames
// that all differ (each side's notifications say something of their
// own: every frame a changed one), with the alignment and pairing of
// Frames ("new") and the former ones ("old", oracle_test.go), in one run:
//
//	go test -run '^$' -bench FramesAllDiffer -benchtime 1x ./internal/diff/
//
// The old ones take minutes at 80,000 frames.
func BenchmarkFramesAllDiffer(b *testing.B) {
	for _, n := range []int{20000, 40000, 80000} {
		rec, live := allDiffer(n, "rec"), allDiffer(n, "live")
		for _, v := range []struct {
			name   string
			frames func(recorded, live []frame.Frame, opts Options) Result
		}{
			{"new", Frames},
			{"old", oracleFrames},
		} {
			b.Run(fmt.Sprintf("%d/%s", n, v.name), func(b *testing.B) {
				for b.Loop() {
					if r := v.frames(rec, live, Options{}); len(r.Differences) != n {
						b.Fatalf("%d differences, want %d changed frames", len(r.Differences), n)
					}
				}
			})
		}
	}
}

// BenchmarkScriptAllDiffer is the alignment alone: script, and go-diff
// over the whole as it was, on 20,000 to 80,000 frames that all differ.
func BenchmarkScriptAllDiffer(b *testing.B) {
	for _, n := range []int{20000, 40000, 80000} {
		a, c := make([]int32, n), make([]int32, n)
		for i := range a {
			a[i], c[i] = int32(i), int32(n+i)
		}
		b.Run(fmt.Sprintf("%d/new", n), func(b *testing.B) {
			for b.Loop() {
				script(a, c, 2*n, alignBudget)
			}
		})
		b.Run(fmt.Sprintf("%d/old", n), func(b *testing.B) {
			for b.Loop() {
				oracleScript(a, c)
			}
		})
	}
}
