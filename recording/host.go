package recording

// A host script plays the host through pipes while the session records.

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/proxy"
	"github.com/tapedeck/tapedeck/replay"
)

// HostScript is the host's side of a session written by hand (JSON lines of
// host frames, each sent once the plugin has said what the line waits
// for; see replay.Script), for Options.Host.
type HostScript struct {
	script *replay.Script
}

// ReadHostScript reads the host script at path. Its errors say what is
// wrong as the record command's --host flag reports it.
func ReadHostScript(path string) (*HostScript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--host: %w", err)
	}
	defer f.Close()
	s, err := replay.ReadScript(f)
	if err != nil {
		return nil, fmt.Errorf("--host %s: %w", path, err)
	}
	return &HostScript{script: s}, nil
}

// playHost runs the relay of cfg with the host script on its host side:
// the script writes the shim's stdin and reads its stdout through pipes, so
// the session is recorded exactly as a host's would be. The plugin's stderr
// goes where cfg says. Signals from the script's grace periods go the way
// the user's do, through sigs. It returns when the plugin has exited; what
// did not go as the script said is noted on the log.
func (s *session) playHost(ctx context.Context, cfg proxy.Config, sigs chan os.Signal) (proxy.Result, error) {
	hostR, hostW, err := os.Pipe()
	if err != nil {
		return proxy.Result{}, fmt.Errorf("host script: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		hostR.Close()
		hostW.Close()
		return proxy.Result{}, fmt.Errorf("host script: %w", err)
	}
	cfg.Stdin, cfg.Stdout = hostR, outW
	type ran struct {
		res proxy.Result
		err error
	}
	done := make(chan ran, 1)
	exited := make(chan replay.Exit, 1)
	go func() {
		res, err := proxy.Run(ctx, cfg)
		outW.Close() // the host reads the plugin's stdout to its end
		hostR.Close()
		exit := replay.Exit{Code: res.Code}
		if res.Signal != 0 {
			exit = replay.Exit{Signal: frame.SignalName(int(res.Signal))}
		}
		exited <- exit
		done <- ran{res, err}
	}()
	plugin := replay.Plugin{
		Stdin:  hostW,
		Stdout: outR,
		Signal: func(sig os.Signal) error {
			sigs <- sig
			return nil
		},
		Wait: func() replay.Exit { return <-exited },
	}
	played, err := replay.Play(ctx, s.opt.Host.script, plugin, replay.Options{StepTimeout: s.opt.StepTimeout, Timeout: 24 * time.Hour})
	r := <-done
	hostW.Close() // the host side is done with its pipes
	outR.Close()
	if err == nil {
		for _, n := range played.Notes {
			fmt.Fprintf(s.log, "tapedeck: record --host: %s\n", escape.Text(n))
		}
	}
	return r.res, r.err
}
