package host

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// echoRecording is a recording of n host notifications that an echo plugin
// (cat) said straight back.
func echoRecording(n int) []frame.Frame {
	fs := make([]frame.Frame, 0, 2*n+2)
	seq := uint64(0)
	for i := range n {
		raw := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"tick","params":{"i":%d,"pad":"%0150d"}}`, i, 0))
		seq++
		fs = append(fs, frame.Frame{Seq: seq, At: int64(i) * 1000, Dir: frame.In, Raw: raw})
		seq++
		fs = append(fs, frame.Frame{Seq: seq, At: int64(i)*1000 + 500, Dir: frame.Out, Raw: raw})
	}
	code := 0
	fs = append(fs, frame.Frame{Seq: seq + 1, Event: frame.EventEOF, Dir: frame.In},
		frame.Frame{Seq: seq + 2, Event: frame.EventExit}.WithEnd("", &code))
	return fs
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplay10k replays a 10,000-frame tape against cat. It reports
// the wall time per host frame (one lockstep round trip each: the replay
// waits for each echo before the next frame) and tapedeck's own CPU time
// per frame, which is what the replay itself costs.
func BenchmarkReplay10k(b *testing.B) {
	if _, err := exec.LookPath("cat"); err != nil {
		b.Skip("no cat")
	}
	const n = 10000
	rec := echoRecording(n)
	b.ResetTimer()
	var cpu time.Duration
	for range b.N {
		c0 := cpuTime()
		res, err := Run(context.Background(), rec, Options{Command: []string{"cat"}})
		cpu += cpuTime() - c0
		if err != nil {
			b.Fatal(err)
		}
		if got := len(res.Live); got < 2*n {
			b.Fatalf("live timeline has %d frames, want at least %d", got, 2*n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/frame")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n)/1000, "cpu-µs/frame")
}

// BenchmarkPlanCarry10k times what finding the values carried back adds
// to reading a 10,000-frame recording: the plan without it
// (plan=without) and with it (plan=with), in one run.
func BenchmarkPlanCarry10k(b *testing.B) {
	rec := echoRecording(10000)
	b.Run("plan=with", func(b *testing.B) {
		for range b.N {
			makePlan(rec, Reading{})
		}
	})
	b.Run("carry-alone", func(b *testing.B) {
		msgs := parseAll(rec)
		b.ResetTimer()
		for range b.N {
			planCarry(rec, msgs, Reading{})
		}
	})
}
