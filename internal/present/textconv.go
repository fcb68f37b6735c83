package present

// A tape as a reviewer reads it in a diff (tapedeck textconv, git's diff
// driver): the session's lasting metadata, then one block per frame, its
// JSON indented with its members sorted.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/tape"
)

// Textconv writes the tape data for a line diff: what a session was (its
// name, command, folder, plugin, status, exit, frame counts, the names of
// its variables), then each frame in tape order as a block, after a blank
// line: a header ("out  request ui/setPanel #3", "err", "event exit") and
// the frame, JSON indented by two spaces with the members of each object
// sorted (a value nested deeper than diff.MaxDepth levels compact on its
// line), else its text. What changes at every recording (ids, times,
// seq numbers, byte counts) is left out, so that re-recording the same
// session changes nothing and one changed label is one -/+ pair. All of
// it is escaped for a terminal. The error is the tape's (not a tape, or a
// malformed line).
func Textconv(w io.Writer, data []byte) error {
	return TextconvFrom(w, bytes.NewReader(data))
}

// TextconvFrom is Textconv of the tape read from r, one frame at a time:
// what it holds does not grow with the tape. On a malformed line it stops
// there with the error, having written the blocks before it.
func TextconvFrom(w io.Writer, r io.Reader) error {
	tr, err := tape.NewReader(r)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	s := tr.Session()
	fmt.Fprintf(bw, "tape %s\n", escape.Text(OrDash(s.Name)))
	fmt.Fprintf(bw, "  command  %s\n", escape.Text(ShellJoin(s.Command)))
	fmt.Fprintf(bw, "  folder   %s\n", escape.Text(s.Cwd))
	fmt.Fprintf(bw, "  plugin   %s\n", escape.Text(PluginLabel(s.Plugin)))
	fmt.Fprintf(bw, "  status   %s (exit %s)\n", escape.Text(s.Status), escape.Text(ExitLabel(s.Exit)))
	fmt.Fprintf(bw, "  frames   %d in, %d out, %d err\n", s.Frames.In, s.Frames.Out, s.Frames.Err)
	if len(s.Env) > 0 {
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, escape.Text(k))
		}
		sort.Strings(keys)
		fmt.Fprintf(bw, "  env      %s\n", strings.Join(keys, " "))
	}
	err = tr.Each(func(f *frame.Frame) error {
		bw.WriteString("\n")
		writeFrameBlock(bw, f)
		return nil
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// TapeDiff writes the line diff of two tapes as Textconv prints them,
// escaped: golden may be empty (a new tape, all of it added). nameA and
// nameB name the two in the diff's header.
func TapeDiff(w io.Writer, golden, next []byte, nameA, nameB string) error {
	var texts [2]string
	for i, data := range [][]byte{golden, next} {
		if i == 0 && len(data) == 0 {
			continue
		}
		var b strings.Builder
		if err := Textconv(&b, data); err != nil {
			return fmt.Errorf("%s: %w", []string{nameA, nameB}[i], err)
		}
		texts[i] = b.String()
	}
	return Unified(w, texts[0], texts[1], nameA, nameB)
}

// writeFrameBlock writes one frame's block: its header line and body.
func writeFrameBlock(bw *bufio.Writer, fr *frame.Frame) {
	if fr.IsEvent() {
		fmt.Fprintf(bw, "event %s\n", escape.Text(fr.Describe()))
		return
	}
	head := fr.Dir.String()
	var v any
	dec := json.NewDecoder(bytes.NewReader(fr.Raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil || dec.More() {
		fmt.Fprintf(bw, "%s\n%s\n", head, escape.Lines(string(fr.Raw)))
		return
	}
	if m, ok := v.(map[string]any); ok {
		head += "  " + messageLabel(m)
	}
	if fr.Cut != nil {
		head += fmt.Sprintf("  (cut: the first %d of %d bytes)", len(fr.Raw), fr.Cut.Len)
	}
	fmt.Fprintf(bw, "%s\n%s", escape.Text(head), escape.JSON(nil, jsonBody(v)))
}

// jsonBody is a frame's decoded JSON as its block shows it, before
// escapes: indented as json.MarshalIndent does, but a value nested past
// diff.MaxDepth levels on one line (indentation that grew with the depth
// made a 155 KB tape 249 MB of text), and a line break at its end.
func jsonBody(v any) []byte {
	return append([]byte(diff.Indent(v)), '\n')
}

// messageLabel names a JSON-RPC message: "request M #ID", "notification
// M", "response #ID", "error #ID", or "" for other JSON.
func messageLabel(m map[string]any) string {
	method, _ := m["method"].(string)
	id, hasID := m["id"]
	idText := ""
	if hasID {
		b, _ := json.Marshal(id)
		idText = " #" + string(b)
	}
	_, isErr := m["error"]
	switch {
	case method != "" && hasID:
		return "request " + method + idText
	case method != "":
		return "notification " + method
	case isErr:
		return "error" + idText
	case hasID:
		return "response" + idText
	}
	return ""
}
