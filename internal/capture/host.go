package capture

// A host script plays the host through pipes while the session records.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/relay"
	"github.com/tapedeck/tapedeck/internal/smallfile"
)

// HostScript is the host's side of a session written by hand (JSON lines of
// host frames, each sent once the plugin has said what the line waits
// for; see host.Script), for Options.Host.
type HostScript struct {
	script *host.Script
	// awaits says, by script line, what the line waits for ("tools/call",
	// "the reply to request 2"), for the error a wait that timed out is.
	awaits map[int]string
	// failure is set by the one Run that plays the script: the first line
	// whose wait timed out, "" when every wait was met.
	failure string
}

// Failure says, once Run has returned, which script line waited in vain:
// "script line 3 waited 30s (--step-timeout) for notifications/progress,
// which never came", with how many more did; "" when every line's wait was met. The
// session's end record says it too (its error).
func (h *HostScript) Failure() string { return h.failure }

// maxHostScript is the largest host script read: a script holds what a
// host says, and a frame may be as large as --max-frame's default.
const maxHostScript = 64 << 20

// ReadHostScript reads the host script at path. Its errors say what is
// wrong as the record command's --host flag reports it.
func ReadHostScript(path string) (*HostScript, error) {
	data, err := smallfile.Read(path, maxHostScript)
	if err != nil {
		return nil, fmt.Errorf("--host: %w", err)
	}
	s, err := host.ReadScript(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("--host %s: %w", path, err)
	}
	return &HostScript{script: s, awaits: scriptAwaits(data)}, nil
}

// scriptAwaits reads what each line of a valid script waits for, numbered
// as host.ReadScript numbers them: its "after" (methods, or {"reply":
// ID}), or for an answer line the request it answers.
func scriptAwaits(data []byte) map[int]string {
	awaits := map[int]string{}
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		var l struct {
			After  json.RawMessage `json:"after"`
			Answer *string         `json:"answer"`
		}
		if json.Unmarshal(bytes.TrimSpace(line), &l) != nil {
			continue
		}
		var what []string
		var one json.RawMessage = l.After
		var many []json.RawMessage
		if json.Unmarshal(l.After, &many) != nil {
			many = []json.RawMessage{one}
		}
		for _, a := range many {
			var method string
			var reply struct {
				Reply json.RawMessage `json:"reply"`
			}
			switch {
			case json.Unmarshal(a, &method) == nil && method != "":
				what = append(what, method)
			case json.Unmarshal(a, &reply) == nil && len(reply.Reply) > 0:
				what = append(what, "the reply to request "+string(reply.Reply))
			}
		}
		if len(what) == 0 && l.Answer != nil {
			what = append(what, "the plugin's request "+*l.Answer)
		}
		if len(what) > 0 {
			awaits[i+1] = escape.Text(strings.Join(what, " and "))
		}
	}
	return awaits
}

// noteFailure keeps, from what a played script gave up on, the first line
// whose wait ran into the step timeout as h's failure.
func (h *HostScript) noteFailure(gaveUp []host.GaveUp) {
	var failed []string
	for _, g := range gaveUp {
		if !g.StepTimeout {
			continue
		}
		what, ok := h.awaits[int(g.Seq)]
		if !ok {
			what = "what the plugin said before it"
		}
		failed = append(failed, fmt.Sprintf("script line %d waited %v (--step-timeout) for %s, which never came; the line was sent anyway", g.Seq, g.Waited, what))
	}
	switch len(failed) {
	case 0:
	case 1:
		h.failure = failed[0]
	default:
		h.failure = fmt.Sprintf("%s (and %d more lines waited in vain)", failed[0], len(failed)-1)
	}
}

// playHost runs the relay of cfg with the host script on its host side:
// the script writes the shim's stdin and reads its stdout through pipes, so
// the session is recorded exactly as a host's would be. The plugin's stderr
// goes where cfg says. Signals from the script's grace periods go the way
// the user's do, through sigs. It returns when the plugin has exited; what
// did not go as the script said is noted on the log.
func (s *session) playHost(ctx context.Context, cfg relay.Config, sigs chan os.Signal) (relay.Result, error) {
	hostR, hostW, err := os.Pipe()
	if err != nil {
		return relay.Result{}, fmt.Errorf("host script: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		hostR.Close()
		hostW.Close()
		return relay.Result{}, fmt.Errorf("host script: %w", err)
	}
	cfg.Stdin, cfg.Stdout = hostR, outW
	type ran struct {
		res relay.Result
		err error
	}
	done := make(chan ran, 1)
	exited := make(chan host.Exit, 1)
	go func() {
		res, err := relay.Run(ctx, cfg)
		outW.Close() // the host reads the plugin's stdout to its end
		hostR.Close()
		exit := host.Exit{Code: res.Code}
		if res.Signal != 0 {
			exit = host.Exit{Signal: frame.SignalName(int(res.Signal))}
		}
		exited <- exit
		done <- ran{res, err}
	}()
	plugin := host.Plugin{
		Stdin:  hostW,
		Stdout: outR,
		Signal: func(sig os.Signal) error {
			sigs <- sig
			return nil
		},
		Wait: func() host.Exit { return <-exited },
	}
	played, err := host.Play(ctx, s.opt.Host.script, plugin, host.Options{StepTimeout: s.opt.StepTimeout, Timeout: 24 * time.Hour, Framing: s.framing})
	r := <-done
	hostW.Close() // the host side is done with its pipes
	outR.Close()
	if err == nil {
		for _, n := range played.Notes {
			fmt.Fprintf(s.log, "tapedeck: record --host: %s\n", escape.Text(n.String()))
		}
		s.opt.Host.noteFailure(played.GaveUp)
	}
	return r.res, r.err
}
