package playground

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/environ"
	"github.com/tapedeck/tapedeck/internal/escape"
)

// Options say what to play and where. Every zero field means the default.
type Options struct {
	// Command is the plugin's argv; nil starts it as the host would, from
	// the manifest's runtime and main.
	Command []string
	// Dir is the plugin's folder, where it runs and where its manifest is
	// read ("": the current folder).
	Dir string
	// Env is the plugin's environment (nil: ours); the host's AGENTTY_*
	// variables are added.
	Env []string
	// StoreDir is the store the sessions are recorded into.
	StoreDir string
	// Name names the sessions: NAME-1, NAME-2, … ("": play-PLUGIN-ID).
	Name string
	// TapesDir is where Keep writes ("": the plugin folder's tapes).
	TapesDir string
	// Watch restarts the plugin when its files change, plays the actions
	// so far again and shows the comparison; WatchEvery is how often the
	// files are looked at (0: 300 ms).
	Watch      bool
	WatchEvery time.Duration
	// poll makes the watch look at the files even where the system
	// notifies of changes (its tests of the fallback).
	poll bool
	// limits are the page server's (nil: defaultLimits; its tests' are
	// shorter).
	limits *limits
	// pageFrames is the page's window on each pipe, in frames (0:
	// keptFrames; its test keeps fewer under the race detector, where a
	// flood past 20,000 took 38 s of CPU).
	pageFrames int
	// tempDir is where the plugin's data folder and the copies of its
	// start are made ("": the system's, as os.TempDir says); a test's
	// puts them inside the plugin's folder.
	tempDir string
	// StepTimeout bounds each wait of a replay of the actions (0: 10 s).
	StepTimeout time.Duration
	// PinClock starts the plugin with its clock pinned and its random
	// numbers seeded (capture.Options.PinClock), as a golden tape needs:
	// the command line's default.
	PinClock bool
	// FreshDirs name variables the plugin reads a folder of its state
	// from (say COSMICA_HOME): the plugin gets a folder of the
	// playground's own in each, which starts as a copy of the folder the
	// variable names here (empty when it names none), and Keep it carries
	// what each session started from beside its tape, as it does for the
	// plugin's data folder.
	FreshDirs []string
	// Ready, when set, is told the page's URL once it is served; Browser,
	// when set, is the command that opens it then: it is given (added, or
	// for %s; see BrowserCommand) the file:// URL of a page only this
	// user may read, which leads it on to the page's URL, never the URL
	// with its token itself.
	Ready   func(url string)
	Browser []string
	// Log gets the playground's own lines, each starting "tapedeck: "
	// (nil: discarded).
	Log io.Writer
	// Version is the tapedeck version stored with the sessions.
	Version string
}

// server is one playground: the page's server and the plugin's host.
type server struct {
	opt     Options
	plugin  *Plugin
	command []string
	env     []string
	tapes   string
	token   string
	addr    string // 127.0.0.1:PORT
	limits  limits // the page's server's
	rules   map[string]check.Rule
	// ctx is the runs' (cancelled last, once the plugin had its grace
	// periods); quit asks the playground to end, over is closed once it
	// has.
	ctx     context.Context
	quit    func()
	quitCh  chan struct{}
	over    chan struct{}
	dataDir string
	// homes are the playground's folders of Options.FreshDirs; snaps holds
	// what each run started from (startdata.go).
	homes []home
	snaps string

	mu      sync.Mutex
	ending  bool // no run starts any more
	cur     *run
	runs    int
	hostCtx json.RawMessage // the context the host gives
	answers map[string]json.RawMessage
	edited  map[string]bool
	storage storage
	subs    map[chan []byte]struct{}
	kept    []json.RawMessage
	watched json.RawMessage // the last watch comparison, or nil
	wg      sync.WaitGroup  // the runs, the watcher
	openers sync.WaitGroup  // the browsers started
}

// Run serves the playground until ctx is done or the page quits. It
// returns an error only when it cannot start (no command, no port, a
// manifest that cannot be read); what goes wrong later is said in the
// page and on opt.Log.
func Run(ctx context.Context, opt *Options) error {
	o := withDefaults(opt)
	p, err := ReadPlugin(o.Dir)
	if err != nil {
		return err
	}
	cmd, tapes, err := o.resolve(p)
	if err != nil {
		return err
	}
	token, err := newToken()
	if err != nil {
		return err
	}
	dataDir, err := os.MkdirTemp(o.tempDir, "tapedeck-play-data-")
	if err != nil {
		return fmt.Errorf("the plugin's data folder: %w", err)
	}
	defer os.RemoveAll(dataDir)
	snaps, err := os.MkdirTemp(o.tempDir, "tapedeck-play-start-")
	if err != nil {
		return fmt.Errorf("the plugin's data folder: %w", err)
	}
	defer os.RemoveAll(snaps)
	homes, err := makeHomes(o.FreshDirs, o.Env)
	defer removeHomes(homes)
	if err != nil {
		return err
	}
	runs, cancelRuns := context.WithCancel(context.Background())
	defer cancelRuns()
	quitCh := make(chan struct{})
	var quitOnce sync.Once
	s := &server{
		opt: o, plugin: p, command: cmd, tapes: tapes, token: token,
		rules: map[string]check.Rule{},
		ctx:   runs, quit: func() { quitOnce.Do(func() { close(quitCh) }) }, quitCh: quitCh,
		over: make(chan struct{}), dataDir: dataDir, homes: homes, snaps: snaps,
		hostCtx: json.RawMessage(defaultContext), answers: defaultAnswers(p),
		edited: map[string]bool{}, subs: map[chan []byte]struct{}{},
	}
	for _, r := range check.Rules() {
		s.rules[r.ID] = r
	}
	s.env = s.pluginEnv()
	srv, err := s.start()
	if err != nil {
		return err
	}
	url := s.URL()
	if o.Ready != nil {
		o.Ready(url)
	}
	if len(o.Browser) > 0 {
		openDir := s.openBrowser(url)
		defer os.RemoveAll(openDir)
	}
	select {
	case <-ctx.Done():
	case <-quitCh:
	case <-srv.Stopped():
	}
	s.end(cancelRuns)
	if err := srv.Close(); err != nil {
		return fmt.Errorf("serve the playground: %w", err)
	}
	return nil
}

// start says what the playground runs, serves the page (loopback only,
// on a free port: never beyond this machine), and starts the plugin and
// the watcher.
func (s *server) start() (*httpServer, error) {
	o := s.opt
	if s.plugin.Wrapped {
		fmt.Fprintf(o.Log, "tapedeck: play: %s is wrapped (tapedeck wrap): the playground runs the plugin's own command, %s, not the launcher\n", escape.Text(s.plugin.Dir), escape.Text(strings.Join(s.command, " ")))
	}
	if err := s.tapesInside(); err != nil {
		fmt.Fprintf(o.Log, "tapedeck: play: %v\n", err) // said now; Keep it refuses it
	}
	page, err := s.page()
	if err != nil {
		return nil, err
	}
	s.limits = defaultLimits()
	if o.limits != nil {
		s.limits = *o.limits
	}
	srv, err := listen(s.limits, o.Log)
	if err != nil {
		return nil, fmt.Errorf("serve the playground: %w", err)
	}
	s.addr = srv.Addr()
	srv.serve(s.routes(page))

	s.mu.Lock()
	s.startLocked(nil)
	s.mu.Unlock()
	if s.opt.Watch {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.watch()
		}()
	}
	return srv, nil
}

// withDefaults is opt (nil: none) with the defaults for what it leaves
// out: no log, a look every 300 ms, 10 s for a step.
func withDefaults(opt *Options) Options {
	if opt == nil {
		opt = &Options{}
	}
	o := *opt
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.WatchEvery <= 0 {
		o.WatchEvery = 300 * time.Millisecond
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = 10 * time.Second
	}
	return o
}

// resolve is the command that runs the plugin p (Options.Command, else
// its manifest's) and the absolute tapes folder (Options.TapesDir, else
// the plugin's tapes), and names the sessions after p when o names none.
func (o *Options) resolve(p *Plugin) (cmd []string, tapes string, err error) {
	cmd = o.Command
	if len(cmd) == 0 {
		if cmd, err = p.command(); err != nil {
			return nil, "", err
		}
	}
	if o.Name == "" {
		o.Name = "play-" + p.ID
	}
	tapes = o.TapesDir
	if tapes == "" {
		tapes = filepath.Join(p.Dir, "tapes")
	}
	if tapes, err = filepath.Abs(tapes); err != nil {
		return nil, "", fmt.Errorf("tapes folder: %w", err)
	}
	return cmd, tapes, nil
}

// openBrowser opens Options.Browser on the page at url, through a file of
// ours that leads it there: the token is on no command line. It returns
// the folder of that file (for the caller to remove when the playground
// ends; "" for none); a browser that cannot be opened is said on the log.
func (s *server) openBrowser(url string) (openDir string) {
	var file string
	openDir, err := os.MkdirTemp("", "tapedeck-play-open-")
	if err == nil {
		file, err = writeOpenPage(openDir, url)
	}
	if err == nil {
		err = s.open(s.opt.Browser, file)
	}
	if err != nil {
		fmt.Fprintf(s.opt.Log, "tapedeck: could not open a browser (%v): open %s yourself\n", err, url)
	}
	return openDir
}

// end ends the playground: the plugin is stopped the host's way
// (shutdown, then its grace periods), the runs cancelled and waited for
// with the watcher, the page let go, the browsers given a second to
// start.
func (s *server) end(cancelRuns context.CancelFunc) {
	s.quit()
	s.mu.Lock()
	s.ending = true
	r := s.cur
	s.stopLocked(r)
	s.mu.Unlock()
	select {
	case <-r.done:
	case <-time.After(termAfter + killAfter + 2*time.Second):
	}
	cancelRuns()
	s.wg.Wait()
	close(s.over)
	opened := make(chan struct{})
	go func() {
		s.openers.Wait()
		close(opened)
	}()
	select {
	case <-opened:
	case <-time.After(time.Second):
	}
}

// URL is the page's address, with its token.
func (s *server) URL() string {
	return "http://" + s.addr + "/?token=" + s.token
}

// newToken is 128 random bits, in hex: the page's key.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make the playground's token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// pluginEnv is the plugin's environment: ours (or Options.Env) and the
// host's variables.
func (s *server) pluginEnv() []string {
	env := s.opt.Env
	if env == nil {
		env = os.Environ()
	}
	env = append([]string(nil), env...)
	for _, h := range s.homes {
		env = environ.Set(env, h.name, h.dir)
	}
	return append(env,
		"AGENTTY_PLUGIN_ID="+s.plugin.ID,
		"AGENTTY_PLUGIN_DIR="+s.plugin.Dir,
		"AGENTTY_PLUGIN_DATA="+s.dataDir,
		"AGENTTY_VERSION="+hostVersion,
		"AGENTTY_LANGUAGE=en",
	)
}

// broadcastLocked sends msg to every page; a page that does not keep up
// is let go (its EventSource reconnects and starts again from a reset).
func (s *server) broadcastLocked(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		fmt.Fprintf(s.opt.Log, "tapedeck: play: encode an event for the page: %v\n", err)
		return
	}
	for ch := range s.subs {
		select {
		case ch <- b:
		default:
			close(ch)
			delete(s.subs, ch)
		}
	}
}
