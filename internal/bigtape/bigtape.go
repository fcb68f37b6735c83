// Package bigtape owns the big tape that tapedeck's memory is measured on
// (bench/memory and the memory tests): the host's ui/event notifications,
// each answered by the plugin's ui/setBadge, the plugin sed, written as it
// goes, never held. The standard library alone.
package bigtape

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

// Write writes a tape of frames frames to path and returns its size;
// changeEvery > 0 changes every changeEvery-th badge (a "-" before its
// text), so that two tapes differ there.
func Write(path string, frames, changeEvery int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("write big tape: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"tapedeck":1,"session":{"id":"01m8b1gtape00000000000000000","name":"big","command":["sed","-u","s|ui/event|ui/setBadge|"],"cwd":".","status":"complete","exit":{"code":0}}}`)
	seq := 0
	for i := range frames / 2 {
		text := strconv.Itoa(i % 1000)
		seq++
		fmt.Fprintf(w, `{"seq":%d,"at":%d,"dir":"in","json":{"jsonrpc":"2.0","method":"ui/event","params":{"text":"%s"}}}`+"\n", seq, seq*5000000, text)
		if changeEvery > 0 && i%changeEvery == changeEvery-1 {
			text = "-" + text
		}
		seq++
		fmt.Fprintf(w, `{"seq":%d,"at":%d,"dir":"out","json":{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"%s"}}}`+"\n", seq, seq*5000000, text)
	}
	fmt.Fprintf(w, `{"seq":%d,"at":%d,"event":"eof"}`+"\n", seq+1, (seq+1)*5000000)
	fmt.Fprintf(w, `{"seq":%d,"at":%d,"event":"exit","code":0}`+"\n", seq+2, (seq+2)*5000000)
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("write big tape %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("write big tape %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("write big tape %s: %w", path, err)
	}
	return fi.Size(), nil
}
