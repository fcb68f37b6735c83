package present

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/escape"
)

// TestFindingsJSONIsOneArray: written a finding at a time, the array is
// what encoding/json makes of the whole, escaped the same way.
func TestFindingsJSONIsOneArray(t *testing.T) {
	t.Parallel()
	for _, found := range [][]check.Finding{nil, {
		{Level: check.Info, Rule: check.RuleManifestMissing, Message: "no manifest"},
		{Level: check.Error, Rule: check.RuleMethodUnknown, Seq: 3, At: 15e6, Method: "no/such\x1b[31m", Message: "the host answers -32601 <\u2028>", Path: "method"},
	}} {
		var got bytes.Buffer
		if err := FindingsJSON(&got, found); err != nil {
			t.Fatal(err)
		}
		all := found
		if all == nil {
			all = []check.Finding{}
		}
		js, _ := json.MarshalIndent(all, "", "  ")
		if want := string(escape.JSON(nil, js)) + "\n"; got.String() != want {
			t.Errorf("FindingsJSON wrote\n%s\nwant\n%s", got.String(), want)
		}
	}
}
