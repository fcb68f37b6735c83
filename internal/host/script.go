package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/message"
)

// A Script is the host's side of a session written by hand: Play sends it
// to a plugin with the waiting rule of a replay, so that a session can be
// recorded without Agentty. A script is JSON lines; blank lines and lines
// that start with "//" are skipped. Each line is one of:
//
//   - a host frame, sent as written: a request or a notification, or a
//     response, which answers the plugin's request with that id;
//   - {"send": FRAME, "after": …, "pause": "750ms", "quiet": "200ms"}: a
//     host frame sent once the plugin has sent what "after" names (a
//     method, or {"reply": ID} for its reply to the host request ID, or a
//     list of those: one more of each than the lines before waited for),
//     then has been silent for "quiet" (a last resort, for readiness no
//     frame shows), then "pause" has passed (a person reading the panel);
//   - {"answer": "METHOD", "result": …} or with "error": the answer to the
//     plugin's next request of METHOD, sent at its place once the plugin
//     has made it ("after", "pause" and "quiet" apply too);
//   - {"answers": {"METHOD": RESULT, …}}: the result for requests of METHOD
//     that no answer line takes (without one: null);
//   - {"close": true}: the host closes the plugin's stdin here;
//   - {"signal": "SIGTERM"}: the host signals the plugin here.
//
// After the last line the host closes stdin (unless a line did) and then
// keeps its grace periods, as after a replay.
type Script struct {
	plan *plan
	n    int // lines
}

// ErrScript wraps what is wrong with a script; the message names the line.
var ErrScript = errors.New("bad host script")

// scriptLine is a wrapper line's members.
type scriptLine struct {
	Send    json.RawMessage            `json:"send"`
	Answer  *string                    `json:"answer"`
	Result  json.RawMessage            `json:"result"`
	Error   json.RawMessage            `json:"error"`
	ID      json.RawMessage            `json:"id"`
	Answers map[string]json.RawMessage `json:"answers"`
	Close   bool                       `json:"close"`
	Signal  string                     `json:"signal"`
	After   json.RawMessage            `json:"after"`
	Pause   string                     `json:"pause"`
	Quiet   string                     `json:"quiet"`
}

// ReadScript reads a host script. Its errors wrap ErrScript and name the
// line and what is wrong with it.
func ReadScript(r io.Reader) (*Script, error) {
	p := &plan{calls: map[string][]*call{}, byID: map[string][]*call{}, fallback: map[string]json.RawMessage{}, script: true, out: scriptBound(), err: scriptBound()}
	br := bufio.NewReader(r)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			n++
			if perr := p.addScriptLine(n, bytes.TrimSpace(line)); perr != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrScript, n, perr)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read host script: %w", err)
		}
	}
	p.readAnswers()
	return &Script{plan: p, n: n}, nil
}

func (p *plan) addScriptLine(n int, line []byte) error {
	if len(line) == 0 || bytes.HasPrefix(line, []byte("//")) {
		return nil
	}
	if !json.Valid(line) || line[0] != '{' {
		return errors.New("want a JSON object (a host frame, or send, answer, answers, close or signal)")
	}
	var w scriptLine
	dec := json.NewDecoder(bytes.NewReader(line))
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(line, &probe); err != nil {
		return errors.New("want a JSON object")
	}
	_, isSend := probe["send"]
	_, isAnswer := probe["answer"]
	_, isAnswers := probe["answers"]
	_, isClose := probe["close"]
	_, isSignal := probe["signal"]
	if !isSend && !isAnswer && !isAnswers && !isClose && !isSignal {
		// A bare host frame.
		return p.addFrame(n, line, nil, 0, 0)
	}
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("%v (members: send, answer, result, error, id, answers, close, signal, after, pause, quiet)", err)
	}
	causes, err := afterCauses(w.After)
	if err != nil {
		return err
	}
	pause, err := duration("pause", w.Pause)
	if err != nil {
		return err
	}
	quiet, err := duration("quiet", w.Quiet)
	if err != nil {
		return err
	}
	switch {
	case isSend:
		if len(w.Send) == 0 || w.Send[0] != '{' {
			return errors.New(`"send" must be a JSON-RPC object`)
		}
		if err := p.addFrame(n, w.Send, causes, pause, quiet); err != nil {
			return err
		}
	case isAnswer:
		if *w.Answer == "" {
			return errors.New(`"answer" must name the method answered`)
		}
		c := p.addCall(call{method: *w.Answer, answer: answerFrame(n, w.Result, w.Error)})
		if len(w.ID) > 0 {
			p.byID[message.IDKey(w.ID)] = append(p.byID[message.IDKey(w.ID)], c)
		} else {
			p.calls[c.method] = append(p.calls[c.method], c)
		}
		p.steps = append(p.steps, step{kind: sendAnswer, frame: c.answer, call: c, causes: causes, script: newScriptWait(pause, quiet)})
	case isAnswers:
		for m, res := range w.Answers {
			p.fallback[m] = res
		}
	case isClose:
		if !w.Close {
			return errors.New(`"close" may only be true`)
		}
		p.steps = append(p.steps, step{kind: closeStdin, frame: &frame.Frame{Seq: uint64(n)}, causes: causes, script: newScriptWait(pause, quiet)})
	case isSignal:
		sig := frame.SignalNumber(w.Signal)
		if sig <= 0 {
			return fmt.Errorf("unknown signal %q (want a name such as SIGTERM)", w.Signal)
		}
		signalFrame := frame.Frame{Seq: uint64(n)}.WithEnd(w.Signal, nil)
		p.steps = append(p.steps, step{kind: sendSignal, frame: &signalFrame, signal: int32(sig), causes: causes, script: newScriptWait(pause, quiet)})
	}
	return nil
}

// addFrame adds a host frame line: a request or notification to send, or a
// response that answers the plugin's request with its id.
func (p *plan) addFrame(n int, raw []byte, causes []string, pause, quiet time.Duration) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return fmt.Errorf("host frame: %v", err)
	}
	f := &frame.Frame{Seq: uint64(n), Raw: compact.Bytes()}
	m := message.Parse(f.Raw)
	switch {
	case m.IsCall():
		p.steps = append(p.steps, step{kind: sendFrame, frame: f, causes: causes, script: newScriptWait(pause, quiet)})
	case m.IsReply():
		c := p.addCall(call{answer: f})
		p.byID[m.IDKey()] = append(p.byID[m.IDKey()], c)
		p.steps = append(p.steps, step{kind: sendAnswer, frame: f, call: c, causes: causes, script: newScriptWait(pause, quiet)})
	default:
		return fmt.Errorf("not a host frame (%s): want a request, a notification or a response", m.Problem)
	}
	return nil
}

// answerFrame is the frame an answer line stands for (its id is the live
// request's when it is sent).
func answerFrame(n int, result, rpcErr json.RawMessage) *frame.Frame {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":0`)
	if len(rpcErr) > 0 {
		b.WriteString(`,"error":`)
		json.Compact(&b, rpcErr)
	} else {
		b.WriteString(`,"result":`)
		if len(result) == 0 {
			b.WriteString("null")
		} else {
			json.Compact(&b, result)
		}
	}
	b.WriteByte('}')
	return &frame.Frame{Seq: uint64(n), Raw: b.Bytes()}
}

// afterCauses reads an "after" member: a method, {"reply": ID}, or a list.
func afterCauses(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var list []json.RawMessage
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf(`"after": %v`, err)
		}
	} else {
		list = []json.RawMessage{raw}
	}
	var causes []string
	for _, e := range list {
		var method string
		if json.Unmarshal(e, &method) == nil && method != "" {
			causes = append(causes, "call "+method)
			continue
		}
		var reply struct {
			Reply json.RawMessage `json:"reply"`
		}
		if json.Unmarshal(e, &reply) == nil && len(reply.Reply) > 0 && string(reply.Reply) != "null" {
			causes = append(causes, "reply "+message.IDKey(reply.Reply))
			continue
		}
		return nil, fmt.Errorf(`"after": %s is neither a method nor {"reply": ID}`, e)
	}
	return causes, nil
}

// maxScriptWait is the longest "pause" or "quiet" a script line may ask
// for: a person reading a panel, or a plugin settling, takes seconds; a
// line that waited for hours would hold the recording up to its overall
// timeout.
const maxScriptWait = 10 * time.Minute

func duration(name, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: %q is not a duration such as 750ms", name, s)
	}
	if d > maxScriptWait {
		return 0, fmt.Errorf("%q: %q is longer than the %v a line may wait", name, s, maxScriptWait)
	}
	return d, nil
}

// Lines is the number of lines the script has.
func (s *Script) Lines() int { return s.n }

// Play plays the host of script s to the plugin p, until the plugin has
// exited and its output is read, with Run's waiting rule and ending; a
// request that no answer line takes gets the "answers" result for its
// method, or null. opts.Command, Dir and Env are not used: p is running.
func Play(ctx context.Context, s *Script, p Plugin, opts Options) (*Result, error) {
	for _, st := range s.plan.steps { // a script can be played once
		if st.call != nil && (st.call.used || st.call.sent) {
			return nil, errors.New("play host script: a script is played once; read it again")
		}
	}
	return play(ctx, s.plan, p, opts)
}

// where names a step for the notes: a recorded frame, or a script line.
func (p *plan) where(st *step) string { return p.step(st).String() }

// step is the host step st is, as a note names it.
func (p *plan) step(st *step) note.Step { return note.Step{Seq: st.frame.Seq, Script: p.script} }

// defaultAnswer is a script's answer to a request no answer line takes.
func (p *plan) defaultAnswer(method string, liveID json.RawMessage) []byte {
	res, ok := p.fallback[method]
	if !ok {
		res = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(liveID)
	b.WriteString(`,"result":`)
	if json.Compact(&b, res) != nil {
		b.WriteString("null")
	}
	b.WriteByte('}')
	return b.Bytes()
}
