package cli

// record --host: a host script plays the host through pipes while the
// session records.

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/proxy"
	"github.com/tapedeck/tapedeck/replay"
)

// readScript reads a host script file.
func readScript(path string) (*replay.Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--host: %w", err)
	}
	defer f.Close()
	s, err := replay.ReadScript(f)
	if err != nil {
		return nil, fmt.Errorf("--host %s: %w", path, err)
	}
	return s, nil
}

// playHost runs the relay of cfg with a host script on its host side: the
// script writes the shim's stdin and reads its stdout through pipes, so the
// session is recorded exactly as a host's would be. The plugin's stderr
// goes where cfg says. Signals from the script's grace periods go the way
// the user's do, through sigs. It returns when the plugin has exited.
func (e *env) playHost(c *cli.Context, script *replay.Script, cfg proxy.Config, sigs chan os.Signal) (proxy.Result, error) {
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
		res, err := proxy.Run(c.Context, cfg)
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
		Signal: func(s os.Signal) error {
			sigs <- s
			return nil
		},
		Wait: func() replay.Exit { return <-exited },
	}
	played, err := replay.Play(c.Context, script, plugin, replay.Options{StepTimeout: c.Duration("step-timeout"), Timeout: 24 * time.Hour})
	r := <-done
	if err == nil {
		for _, n := range played.Notes {
			fmt.Fprintf(e.stderr, "tapedeck: record --host: %s\n", escape.Text(n))
		}
	}
	return r.res, r.err
}
