package present

// How check's findings are shown: a table, or one JSON array.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/screen"
)

// FindingsJSON writes found as one indented JSON array, a finding at
// a time.
func FindingsJSON(w io.Writer, found []check.Finding) error {
	if len(found) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("[\n  ")
	for i := range found {
		if i > 0 {
			bw.WriteString(",\n  ")
		}
		js, err := json.MarshalIndent(&found[i], "  ", "  ")
		if err != nil {
			return err
		}
		bw.Write(escape.JSON(nil, js))
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

// Findings writes one line per finding and a closing count of the
// findings of each level (levels: those shown and those not).
func Findings(w io.Writer, found []check.Finding, levels map[check.Level]int) error {
	var t screen.Table
	for _, f := range found {
		seq, when := "-", "-"
		if f.Seq > 0 {
			seq = fmt.Sprintf("#%d", f.Seq)
			when = Duration(time.Duration(f.At))
		}
		msg := f.Message
		if f.Path != "" {
			msg = f.Path + ": " + msg
		}
		if f.Spec != "" {
			msg += " (" + f.Spec + ")"
		}
		t.Row(seq, when, string(f.Level), f.Rule, OrDash(f.Method), escape.Text(msg))
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	errs, warns := levels[check.Error], levels[check.Warning]
	infos := 0
	for l, n := range levels {
		if l != check.Error && l != check.Warning {
			infos += n
		}
	}
	_, err := fmt.Fprintf(w, "%d %s, %d %s, %d info\n", errs, Plural(errs, "error"), warns, Plural(warns, "warning"), infos)
	return err
}
