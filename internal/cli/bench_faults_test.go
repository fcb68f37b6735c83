package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// peakRSS runs the tapedeck binary and returns its peak resident memory in
// MB; it fails b when the command fails.
func peakRSS(b *testing.B, args ...string) float64 {
	b.Helper()
	peak := filepath.Join(b.TempDir(), "peak")
	cmd := exec.Command(peakRSSProgram(b), append([]string{peak, tapedeckBin}, args...)...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &errb
	err := cmd.Run()
	if _, exit := err.(*exec.ExitError); err != nil && !(exit && args[len(args)-2] == "check") {
		b.Fatalf("tapedeck %s: %v: %s", strings.Join(args, " "), err, errb.Bytes())
	}
	return float64(readPeakKiB(b, peak)) / 1024
}

// BenchmarkImportLongLine imports a tape holding one 300 MB line (the
// audit's case) and shows it; it reports each command's peak memory.
// Before import applied --max-frame: 2.0 GB and 1.7 GB.
func BenchmarkImportLongLine(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "long.tape")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, `{"tapedeck":1,"session":{"id":"01big000000000000000000000","command":["p"],"cwd":"","started":"2025-01-01T00:00:00Z","ended":null,"status":"complete","exit":{},"frames":{"in":0,"out":0,"err":0},"bytes":{"in":0,"out":0,"err":0},"plugin":{"id":"","name":"","version":""},"tapedeck":"t"}}`+"\n")
	fmt.Fprint(w, `{"seq":1,"at":0,"dir":"err","text":"`)
	chunk := strings.Repeat("z", 1<<20)
	for range 300 {
		w.WriteString(chunk)
	}
	fmt.Fprint(w, "\"}\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var imp, show float64
	for b.Loop() {
		store := filepath.Join(b.TempDir(), "store")
		imp = max(imp, peakRSS(b, "--store", store, "import", path))
		show = max(show, peakRSS(b, "--store", store, "show", "last"))
	}
	b.ReportMetric(imp, "import-MB")
	b.ReportMetric(show, "show-MB")
}

// BenchmarkCheckDeepTrees checks a 3 MB tape of UI trees 4,990 levels deep
// (the audit's case: 5.8 s and 709 MB before the walk was linear) and
// reports the peak memory.
func BenchmarkCheckDeepTrees(b *testing.B) {
	var t strings.Builder
	t.WriteString(`{"tapedeck":1,"session":{"id":"01deep0000000000000000000a","command":["x"],"cwd":"","started":"2026-01-01T00:00:00Z","ended":null,"status":"complete","exit":{},"frames":{"in":0,"out":0,"err":0},"bytes":{"in":0,"out":0,"err":0},"plugin":{"id":"","name":"","version":""},"tapedeck":"t"}}` + "\n")
	t.WriteString(`{"seq":1,"at":0,"dir":"in","json":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"apiVersion":4,"plugin":{"id":"deep"}}}}` + "\n")
	for i := 1; t.Len() < 3<<20; i++ {
		fmt.Fprintf(&t, `{"seq":%d,"at":%d,"dir":"out","json":{"jsonrpc":"2.0","id":%d,"method":"ui/setPanel","params":{"tree":`, i+1, i*1e9, i)
		t.WriteString(strings.Repeat(`{"type":"column","children":[{"type":"text","text":"x"},`, 4990))
		t.WriteString(`{"type":"text","text":"leaf"}` + strings.Repeat(`]}`, 4990) + "}}}\n")
	}
	path := filepath.Join(b.TempDir(), "deep.jsonl")
	if err := os.WriteFile(path, []byte(t.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	var peak float64
	for b.Loop() {
		peak = max(peak, peakRSS(b, "--store", b.TempDir(), "check", path))
	}
	b.ReportMetric(peak, "peak-MB")
}
