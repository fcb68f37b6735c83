package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/jsonpath"
	"github.com/tapedeck/tapedeck/tape"
)

// source is a recording to replay or check: a tape file or a stored session.
type source struct {
	name     string // the tape's path or the session's id
	tapePath string // "" for a stored session
	tape     *tape.File
	meta     *frame.Session
	frames   []frame.Frame
}

// loadSource reads ref as a tape when it names a file, else as a session
// reference in the store.
func (e *env) loadSource(c *cli.Context, ref string) (*source, error) {
	if fi, err := os.Stat(ref); err == nil && !fi.IsDir() {
		return readTapeFile(ref)
	}
	st, err := e.openStore(c)
	if err != nil {
		return nil, err
	}
	meta, err := st.Resolve(ref)
	if err != nil {
		return nil, fmt.Errorf("%v (a tape file or a session: id, prefix, name or last)", err)
	}
	src := &source{name: meta.ID, meta: meta}
	err = st.Frames(meta.ID, func(f *frame.Frame) error {
		c := *f
		c.Raw = bytes.Clone(f.Raw)
		src.frames = append(src.frames, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", meta.ID, err)
	}
	return src, nil
}

func readTapeFile(path string) (*source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("open tape: %w", err)
	}
	tf, err := tape.ReadFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &source{name: path, tapePath: path, tape: tf, meta: tf.Session, frames: tf.Frames}, nil
}

// isTape reports whether path starts like a tape.
func isTape(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t"), []byte(`{"tapedeck"`))
}

// command works out what to run: the argv after "--" in the current
// directory (or --cwd), else the recorded command in the recorded working
// directory; a relative recorded directory is taken from the tape's folder,
// and an absolute program that is missing here is looked up by name.
func (s *source) command(argv []string, cwd string) (cmd []string, dir string, notes []string, err error) {
	if len(argv) > 0 {
		dir = cwd
		if dir == "" {
			dir, _ = os.Getwd()
		}
		return argv, dir, nil, nil
	}
	if len(s.meta.Command) == 0 {
		return nil, "", nil, fmt.Errorf("%s has no recorded command: give one after --", s.name)
	}
	cmd = append([]string(nil), s.meta.Command...)
	dir = s.meta.Cwd
	if cwd != "" {
		dir = cwd
	} else if dir != "" && !filepath.IsAbs(dir) && s.tapePath != "" {
		dir = filepath.Join(filepath.Dir(s.tapePath), dir)
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, "", nil, fmt.Errorf("the recorded working directory %s does not exist here: give --cwd DIR, or a command after --", dir)
		}
	}
	if filepath.IsAbs(cmd[0]) {
		if _, err := os.Stat(cmd[0]); errors.Is(err, os.ErrNotExist) {
			if p, err := exec.LookPath(filepath.Base(cmd[0])); err == nil {
				notes = append(notes, fmt.Sprintf("%s is not here; using %s", cmd[0], p))
				cmd[0] = p
			}
		}
	}
	return cmd, dir, notes, nil
}

// env is the plugin's environment: ours plus the recorded AGENTTY_*
// variables. A tape's env may name others (a tape is a file anyone can
// write): those are never applied, and ignored names them.
func (s *source) env() (env, added, ignored []string) {
	env = os.Environ()
	keys := make([]string, 0, len(s.meta.Env))
	for k := range s.meta.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, "AGENTTY_") || strings.ContainsAny(k, "=\x00") {
			ignored = append(ignored, k)
			continue
		}
		added = append(added, k+"="+s.meta.Env[k])
	}
	return append(env, added...), added, ignored
}

// config is tapedeck.json, kept beside tapes.
type config struct {
	Ignore []string `json:"ignore"`
}

const configName = "tapedeck.json"

func readConfig(path string) (*config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var c config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %v (expected {\"ignore\": [\"METHOD:PATH\", …]})", path, err)
	}
	return &c, nil
}

// ignoreRules parses rules from flags and config, naming the bad one.
func ignoreRules(flags []string, cfg *config, cfgPath string) ([]jsonpath.Rule, error) {
	var rules []jsonpath.Rule
	for _, s := range flags {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("--ignore %q: %v", s, err)
		}
		rules = append(rules, r)
	}
	for _, s := range cfg.Ignore {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("%s: ignore rule %q: %v", cfgPath, s, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// ignoreFunc turns rules into the predicate diff takes.
func ignoreFunc(rules []jsonpath.Rule) func(string, []string) bool {
	if len(rules) == 0 {
		return nil
	}
	return func(method string, p []string) bool {
		for _, r := range rules {
			if r.MatchMethod(method) && r.Path.Match(p) {
				return true
			}
		}
		return false
	}
}

// pathChange is a path that changed in a message of method.
type pathChange struct {
	method string
	segs   []string
}

// proposeRules spells the narrowest ignore rules that cover paths: each path
// as it is, except that paths alike but for array indexes (several children
// whose text varies the same way) share one rule with [*] where their
// indexes differ. Sorted, without duplicates.
func proposeRules(paths []pathChange) []string {
	type group struct {
		method string
		segs   []string // the first path, generalised where others differ
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range paths {
		shape := make([]string, len(p.segs))
		for i, s := range p.segs {
			shape[i] = s
			if isIndex(s) {
				shape[i] = "[*]"
			}
		}
		k := p.method + "\x00" + strings.Join(shape, "\x00")
		g, ok := groups[k]
		if !ok {
			groups[k] = &group{method: p.method, segs: append([]string(nil), p.segs...)}
			order = append(order, k)
			continue
		}
		for i, s := range p.segs {
			if isIndex(s) && g.segs[i] != s {
				g.segs[i] = "[*]"
			}
		}
	}
	var rules []string
	seen := map[string]bool{}
	for _, k := range order {
		r := spellRule(groups[k].method, groups[k].segs)
		if !seen[r] {
			seen[r] = true
			rules = append(rules, r)
		}
	}
	sort.Strings(rules)
	return rules
}

func isIndex(s string) bool { return strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") }

// spellRule spells an ignore rule: METHOD:PATH, keys that need it quoted.
func spellRule(method string, segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case isIndex(s):
			b.WriteString(s)
		case s == "" || strings.ContainsAny(s, `.[]"*`):
			q, _ := json.Marshal(s)
			b.WriteString("[" + string(q) + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	if method == "" {
		method = "*"
	}
	return method + ":" + b.String()
}
