package check

import (
	"fmt"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestRunningTableStaysBounded: a timer or fetch the full request table
// has no room for is not added to it when it is counted as running (it
// was, past maxTracked).
func TestRunningTableStaysBounded(t *testing.T) {
	for method, params := range map[string]string{"net/fetch": `{"url":"https://x/"}`, "host/timer": `{"ms":10}`} {
		c := newAgentty(Options{APIVersion: 2})
		for i := range maxTracked {
			c.pluginCalls[fmt.Sprintf("f%d", i)] = call{method: "x/y"}
		}
		raw := fmt.Sprintf(`{"jsonrpc":"2.0","id":"new","method":%q,"params":%s}`, method, params)
		c.Feed(&frame.Frame{Seq: 1, Dir: frame.Out, Raw: []byte(raw)})
		if got := len(c.pluginCalls); got != maxTracked {
			t.Errorf("%s: the table holds %d requests after one more, want maxTracked (%d)", method, got, maxTracked)
		}
	}
}
