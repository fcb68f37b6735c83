// Package clock owns tapedeck's pinned clock for Node and Python plugins:
// two small preload files embedded in tapedeck (a --require module for
// Node, a sitecustomize for Python) that make the plugin's wall clock read
// the session's recorded start plus the recorded time of the last line the
// host gave the plugin (published, before the line is written, into a
// small file of the preload's folder: the "now" file), and seed its random
// numbers (Math.random, crypto.randomUUID and getRandomValues; random,
// os.urandom, uuid.uuid4) from the session. It installs them into a
// private temporary folder and spells the environment that loads them: it
// adds to NODE_OPTIONS and PYTHONPATH (keeping what the user has there) and
// sets the TAPEDECK_CLOCK_* variables. It never touches the bytes a plugin
// says or hears, and it takes nothing from a tape but two numbers.
package clock

import (
	"crypto/rand"
	"embed"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/environ"
)

//go:embed preload/clock.cjs preload/sitecustomize.py
var preload embed.FS

// The variables the preloads read.
const (
	EnvOrigin   = "TAPEDECK_CLOCK_ORIGIN_MS" // the recorded start, Unix milliseconds
	EnvSeed     = "TAPEDECK_CLOCK_SEED"      // the seed of the random numbers; unset: not seeded
	EnvNow      = "TAPEDECK_CLOCK_NOW_FILE"  // the file the pinned time is published in
	EnvChildren = "TAPEDECK_CLOCK_CHILDREN"  // "1": the plugin's children are pinned too
	// What the plugin had in NODE_OPTIONS and PYTHONPATH, for the preload
	// to give back to the plugin's children (unset: it had nothing).
	envNodeOptions = "TAPEDECK_CLOCK_NODE_OPTIONS"
	envPythonPath  = "TAPEDECK_CLOCK_PYTHONPATH"
)

// loadedFile is the name of the file, beside the now file, a preload
// appends a line to when it loads.
const loadedFile = "loaded"

// nowFile is the name of the file, in the preload's folder, that holds the
// pinned time: "NS NS\n", the same Unix nanoseconds twice, each 20 digits
// wide (a reader that sees the two differ caught a write half done and
// reads again).
const nowFile = "now"

// New pins a clock to start with a fresh random seed.
func New(start time.Time) frame.Clock {
	var b [4]byte
	rand.Read(b[:])
	return frame.Clock{Origin: start, Seed: binary.LittleEndian.Uint32(b[:])}
}

// Preload is the preload files installed in a folder of their own, and
// the now file the pinned time is published in.
type Preload struct {
	dir string
	now *os.File
	buf [42]byte
}

// Install writes the preload files into a new private temporary folder
// (0700, a random name: nobody else can plant files there). Close removes
// it. The folder goes on PYTHONPATH, a list split on ':': when the
// temporary folder's path holds one, /tmp is used, and when that will
// not do either, the pin cannot be installed.
func Install() (*Preload, error) {
	parent := os.TempDir()
	if strings.ContainsRune(parent, os.PathListSeparator) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "tapedeck-clock-")
	if err != nil {
		return nil, fmt.Errorf("install the clock preload: %w", err)
	}
	if strings.ContainsRune(dir, os.PathListSeparator) || strings.ContainsAny(dir, "\n\x00") {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("install the clock preload: its folder %q holds %q, which PYTHONPATH cannot: set TMPDIR to a folder without it", dir, os.PathListSeparator)
	}
	for _, name := range []string{"clock.cjs", "sitecustomize.py"} {
		b, _ := preload.ReadFile("preload/" + name)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("install the clock preload: %w", err)
		}
	}
	now, err := os.OpenFile(filepath.Join(dir, nowFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("install the clock preload: %w", err)
	}
	return &Preload{dir: dir, now: now}, nil
}

// Dir is the folder the preload files are in.
func (p *Preload) Dir() string { return p.dir }

// Loaded reports whether a process loaded a preload since Install: false
// when the plugin never ran Node or Python with the environment Env gave
// it (a launcher replaced NODE_OPTIONS or PYTHONPATH, or the plugin is
// neither), so its clock was never pinned.
func (p *Preload) Loaded() bool {
	fi, err := os.Stat(filepath.Join(p.dir, loadedFile))
	return err == nil && fi.Size() > 0
}

// Close removes the preload files.
func (p *Preload) Close() error {
	p.now.Close()
	return os.RemoveAll(p.dir)
}

// Publish makes the plugin's pinned clock read t from now on. Call it
// before the plugin can see the line it stamps (before writing the line
// to the plugin's stdin), from one goroutine at a time. It is one pwrite
// of a few bytes; an error is the file system's (the pin then stays at
// what was published before).
func (p *Preload) Publish(t time.Time) error {
	ns := max(t.UnixNano(), 0)
	b := fmt.Appendf(p.buf[:0], "%020d %020d\n", ns, ns)
	if _, err := p.now.WriteAt(b, 0); err != nil {
		return fmt.Errorf("publish the pinned time: %w", err)
	}
	return nil
}

// Env returns env (nil: ours) with the pin added: NODE_OPTIONS gains
// --require of the Node preload after whatever the user has there, so the
// user's preloads run first; PYTHONPATH gains the preload folder in front
// (Python runs the first sitecustomize it finds; ours runs the user's next
// one, then pins); TAPEDECK_CLOCK_* carry the origin and the seed, and what
// NODE_OPTIONS and PYTHONPATH were, which the preload gives back to the
// plugin's children unless c.Children (then they are pinned too).
func (p *Preload) Env(env []string, c frame.Clock) []string {
	if env == nil {
		env = os.Environ()
	}
	nodeOpts, hasNode := environ.Lookup(env, "NODE_OPTIONS")
	pyPath, hasPy := environ.Lookup(env, "PYTHONPATH")
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "NODE_OPTIONS", "PYTHONPATH", EnvOrigin, EnvSeed, EnvNow, EnvChildren, envNodeOptions, envPythonPath:
			continue
		}
		out = append(out, kv)
	}
	req := "--require " + nodeQuote(filepath.Join(p.dir, "clock.cjs"))
	if strings.TrimSpace(nodeOpts) != "" {
		req = nodeOpts + " " + req
	}
	py := p.dir
	if hasPy && pyPath != "" {
		py += string(os.PathListSeparator) + pyPath
	}
	out = append(out,
		"NODE_OPTIONS="+req,
		"PYTHONPATH="+py,
		EnvOrigin+"="+strconv.FormatInt(c.Origin.UnixMilli(), 10),
		EnvNow+"="+filepath.Join(p.dir, nowFile),
	)
	if !c.Unseeded {
		out = append(out, EnvSeed+"="+strconv.FormatUint(uint64(c.Seed), 10))
	}
	if hasNode {
		out = append(out, envNodeOptions+"="+nodeOpts)
	}
	if hasPy {
		out = append(out, envPythonPath+"="+pyPath)
	}
	if c.Children {
		out = append(out, EnvChildren+"=1")
	}
	return out
}

// nodeQuote quotes a path for NODE_OPTIONS, which splits on spaces and
// reads double quotes with backslash escapes.
func nodeQuote(s string) string {
	if !strings.ContainsAny(s, " \t\"\\") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Describe spells a pinned clock for show and -v:
// "pinned to 2026-11-30T15:04:08.346Z + recorded time, seed 1234567".
func Describe(c *frame.Clock) string {
	if c == nil {
		return ""
	}
	seed := fmt.Sprintf("seed %d", c.Seed)
	if c.Unseeded {
		seed = "randomness not seeded"
	}
	s := fmt.Sprintf("pinned to %s + recorded time, %s", c.Origin.UTC().Format("2006-01-02T15:04:05.000Z"), seed)
	if c.Children {
		s += ", children pinned too"
	}
	if c.Missed {
		s = "not pinned: the plugin never loaded the pinned clock (" + s + ")"
	}
	return s
}

// Pin installs the preloads and returns env with c pinned in it, and the
// preload to publish the pinned time in and to close once the plugin is
// done; the pinned clock reads c's origin until the first Publish. With c
// nil it returns env as it is and a nil preload: nothing is pinned.
func Pin(env []string, c *frame.Clock) ([]string, *Preload, error) {
	if c == nil {
		return env, nil, nil
	}
	p, err := Install()
	if err != nil {
		return env, nil, err
	}
	if err := p.Publish(c.Origin); err != nil {
		p.Close()
		return env, nil, err
	}
	return p.Env(env, *c), p, nil
}
