package present

import (
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/htmlreport"
)

// TestReportFindingsAreCapped: a rule broken on every frame marks at most
// reportFindingsPerRule of them in the HTML report, and one more finding
// says how many tapedeck check lists besides.
func TestReportFindingsAreCapped(t *testing.T) {
	const n = reportFindingsPerRule + 250
	frames := []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.4.0"},"plugin":{"id":"p","name":"P","version":"1.0.0"}}}`)}}
	for i := range n {
		frames = append(frames, frame.Frame{Seq: uint64(i + 2), At: int64(i) * 1e7, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","method":"no/such"}`)})
	}
	got, err := checkFindings(&frame.Session{}, htmlreport.Slice(frames))
	if err != nil {
		t.Fatal(err)
	}
	marked, more := 0, ""
	for _, f := range got {
		switch {
		case f.Rule == "method-unknown" && f.Seq > 0:
			marked++
		case f.Rule == "method-unknown":
			more = f.Message
		}
	}
	if marked != reportFindingsPerRule || !strings.HasPrefix(more, "and 250 more method-unknown findings") {
		t.Errorf("%d marked, then %q; want %d and a line for the 250 more", marked, more, reportFindingsPerRule)
	}
}
