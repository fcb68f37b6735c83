package playground

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/message"
)

// readGap is how long a person takes to read a toast: a line sent after a
// ui/notify that came this long (or longer) after it pauses, in a replay,
// as the person did, so that the host's 700 ms rule drops the same toasts.
const readGap = 700 * time.Millisecond

// A step is one thing the host did in a session: a frame it sent (a
// request, a notification or an answer), with what the plugin had said
// since the host's previous step.
type step struct {
	raw    []byte
	answer bool   // an answer to the plugin's request of method
	method string // the method answered
	causes []cause
	pause  bool // the person read a toast first (see readGap)
}

// A cause is one frame of the plugin's, as replay identifies it across
// runs (host.CauseOf): a request or notification by its method, a reply
// by the id of the host request it answers.
type cause struct {
	key    string          // host.CauseOf's key
	method string          // for a call
	reply  json.RawMessage // for a reply: the host request's id
}

// steps reads a session's frames into the host's steps, in order, and the
// plugin's frames after the last one (the tail). Answers to methods the
// host only ever answered with null are left out (a host script answers
// null by itself, at once, as the playground did): their causes go to the
// next step.
func steps(frames []frame.Frame) (out []step, tail []cause) {
	methodOf := map[string]string{} // the plugin's request ids → method
	nonNull := map[string]bool{}    // methods answered with something else than a null result
	for i := range frames {
		f := &frames[i]
		if f.IsEvent() || f.Dir == frame.Err {
			continue
		}
		m := message.Parse(bytes.TrimSuffix(f.Raw, []byte("\r")))
		switch {
		case f.Dir == frame.Out && m.Kind == message.Request:
			methodOf[m.IDKey()] = m.Method
		case f.Dir == frame.In && m.IsReply():
			if m.Kind == message.ErrorReply || string(bytes.TrimSpace(m.Result)) != "null" {
				nonNull[methodOf[m.IDKey()]] = true
			}
		}
	}
	var causes []cause
	lastNotify := int64(-1)
	for i := range frames {
		f := &frames[i]
		if f.IsEvent() || f.Dir == frame.Err {
			continue
		}
		m := message.Parse(bytes.TrimSuffix(f.Raw, []byte("\r")))
		if f.Dir == frame.Out {
			key, ok := host.CauseOf(&m)
			if !ok {
				continue
			}
			c := cause{key: key}
			if m.IsCall() {
				c.method = m.Method
				if m.Method == "ui/notify" {
					lastNotify = f.At
				}
			} else {
				c.reply = append(json.RawMessage(nil), m.ID...)
			}
			causes = append(causes, c)
			continue
		}
		st := step{raw: f.Raw, causes: causes}
		switch {
		case m.IsCall():
			st.pause = lastNotify >= 0 && f.At-lastNotify >= int64(readGap) && hasNotify(causes)
		case m.IsReply():
			st.answer, st.method = true, methodOf[m.IDKey()]
			if st.method == "" || !nonNull[st.method] {
				continue // answered null by the script itself; the causes wait for the next step
			}
		default:
			continue
		}
		out = append(out, st)
		causes = nil
	}
	return out, causes
}

func hasNotify(cs []cause) bool {
	for _, c := range cs {
		if c.method == "ui/notify" {
			return true
		}
	}
	return false
}

// HostScript writes the host's side of a session (its frames, in order)
// as a host script: each line waits for what the plugin had said before
// it in the session, so that the script replays by causes, not by time;
// the answers to the plugin's requests are answer lines at their places.
// heading lines are written first as // comments.
func HostScript(frames []frame.Frame, heading ...string) []byte {
	var b bytes.Buffer
	for _, h := range heading {
		b.WriteString("// ")
		b.WriteString(h)
		b.WriteByte('\n')
	}
	list, _ := steps(frames)
	for _, st := range list {
		writeStep(&b, &st)
	}
	return b.Bytes()
}

func writeStep(b *bytes.Buffer, st *step) {
	raw := compact(st.raw)
	if st.answer {
		var obj map[string]json.RawMessage
		json.Unmarshal(raw, &obj)
		b.WriteString(`{"answer":`)
		method, _ := json.Marshal(st.method)
		b.Write(method)
		if e, ok := obj["error"]; ok && string(e) != "null" {
			b.WriteString(`,"error":`)
			b.Write(e)
		} else if r, ok := obj["result"]; ok {
			b.WriteString(`,"result":`)
			b.Write(r)
		} else {
			b.WriteString(`,"result":null`)
		}
	} else if len(st.causes) == 0 && !st.pause {
		b.Write(raw)
		b.WriteByte('\n')
		return
	} else {
		b.WriteString(`{"send":`)
		b.Write(raw)
	}
	if len(st.causes) > 0 {
		b.WriteString(`,"after":`)
		if len(st.causes) > 1 {
			b.WriteByte('[')
		}
		for i, c := range st.causes {
			if i > 0 {
				b.WriteByte(',')
			}
			if c.method != "" {
				m, _ := json.Marshal(c.method)
				b.Write(m)
			} else {
				b.WriteString(`{"reply":`)
				b.Write(c.reply)
				b.WriteByte('}')
			}
		}
		if len(st.causes) > 1 {
			b.WriteByte(']')
		}
	}
	if st.pause {
		b.WriteString(`,"pause":"750ms"`)
	}
	b.WriteString("}\n")
}
