package host

import (
	"errors"
	"strings"
	"testing"
)

// FuzzReadScript: any input is a script or an error that names a line;
// never a panic, and every step of a script has what it needs to be sent.
func FuzzReadScript(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"send":{"jsonrpc":"2.0","method":"go"},"after":["ui/setPanel",{"reply":1}],"pause":"1ms","quiet":"1ms"}`,
		`{"answer":"ask","result":{"ok":true}}` + "\n" + `{"answers":{"x":[1]}}`,
		`{"close":true}` + "\n" + `{"signal":"SIGTERM"}` + "\n// comment\n\n",
		`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"no"}}`,
		`{"send":[1]}`, `[]`, `{"answer":"x","id":{"a":1}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ReadScript(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrScript) && !strings.HasPrefix(err.Error(), "read host script") {
				t.Fatalf("error %v does not wrap ErrScript", err)
			}
			if errors.Is(err, ErrScript) && !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error %v names no line", err)
			}
			return
		}
		for _, st := range s.plan.steps {
			if st.frame == nil || st.kind == sendAnswer && (st.call == nil || st.call.answer == nil) {
				t.Fatalf("step %+v lacks what it sends", st)
			}
			if st.kind == sendFrame && len(st.frame.Raw) == 0 {
				t.Fatal("a host frame with no bytes")
			}
		}
	})
}
