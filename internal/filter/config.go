package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/smallfile"
)

// ConfigName is the file beside tapes that holds their ignore rules and
// filters.
const ConfigName = "tapedeck.json"

// Config is tapedeck.json, kept beside tapes:
//
//	{"ignore": ["METHOD:PATH", …],
//	 "filters": [{"regex": "…", "replacement": "[time]", "at": "METHOD:PATH"}, …],
//	 "carry": ["METHOD:PATH", …],
//	 "env": ["NAME", …]}
//
// Ignore rules leave whole values out of the comparison; filters replace
// what matches inside string values with a placeholder, on both sides,
// before comparing (see Filter; "at" is optional). Carry rules name places
// of the plugin's messages whose values the plugin chooses itself (a
// response has the method of the request it answers): a replay sends the
// live value wherever the host sends the recorded one back, and compares
// the one as the other, beside the places the host profile names and
// those found in the recording (see host.Reading). Env names variables
// that record keeps with the session (as record --env does) when run in
// the folder of this file, and that a replay says it ran without when the
// recording has none.
type Config struct {
	Ignore  []string `json:"ignore,omitempty"`
	Filters []Filter `json:"filters,omitempty"`
	Carry   []string `json:"carry,omitempty"`
	Env     []string `json:"env,omitempty"`
}

// ReadConfig reads tapedeck.json at path; a missing file is an empty
// config. A filter whose regex does not compile (or is empty, or matches
// the empty string) or whose "at" is not a METHOD:PATH rule is refused,
// in one line naming the file and the filter.
func ReadConfig(path string) (*Config, error) {
	b, err := smallfile.Read(path, smallfile.JSONCap)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, err // it names the file
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %v (expected {\"ignore\": [\"METHOD:PATH\", …], \"filters\": [{\"regex\": \"…\", \"replacement\": \"[time]\"}, …], \"carry\": [\"METHOD:PATH\", …], \"env\": [\"NAME\", …]})", path, err)
	}
	for i, f := range c.Filters {
		if _, err := f.compile(); err != nil {
			return nil, fmt.Errorf("%s: filter %d (regex %q): %v", path, i+1, f.Regex, err)
		}
	}
	if _, err := CarryRules(c.Carry, path); err != nil {
		return nil, err
	}
	for _, name := range c.Env {
		if !envName.MatchString(name) {
			return nil, fmt.Errorf("%s: env %q: want the name of an environment variable, such as MEMORY_FILE_PATH", path, name)
		}
	}
	return &c, nil
}

// ConfigPath is the tapedeck.json beside a tape.
func ConfigPath(tapePath string) string {
	return filepath.Join(filepath.Dir(tapePath), ConfigName)
}

// AddToConfig adds ignore rules and filters (what replay --runs
// proposes) to the tapedeck.json at path in one write, keeping what it
// has, in order, and adding each new one once. Nothing to add leaves the
// file alone.
func AddToConfig(path string, rules []string, filters []Filter) error {
	if path == "" {
		return errors.New("--write-config needs a tape: tapedeck.json lives beside it")
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		return err
	}
	for _, f := range filters {
		if _, err := f.compile(); err != nil {
			return fmt.Errorf("filter (regex %q): %v", f.Regex, err)
		}
	}
	added := false
	have := map[string]bool{}
	for _, r := range cfg.Ignore {
		have[r] = true
	}
	for _, r := range rules {
		if !have[r] {
			have[r] = true
			cfg.Ignore = append(cfg.Ignore, r)
			added = true
		}
	}
	haveF := map[Filter]bool{}
	for _, f := range cfg.Filters {
		haveF[f] = true
	}
	for _, f := range filters {
		if !haveF[f] {
			haveF[f] = true
			cfg.Filters = append(cfg.Filters, f)
			added = true
		}
	}
	if !added {
		return nil
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(cfg)
	})
}

// envName is what a variable tapedeck.json's env names must be named.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CarryRules parses carry rules (those of the tapedeck.json at where, or
// of another source where names), naming the bad one.
func CarryRules(rules []string, where string) ([]jsonpath.Rule, error) {
	var out []jsonpath.Rule
	for _, s := range rules {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("%s: carry rule %q: %v (want METHOD:PATH naming where the plugin says the value, such as tools/call:result.task.taskId)", where, s, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ConfigEnv is the "env" list of the tapedeck.json in dir (none when it
// has no such file): the variables record keeps with a session it records
// there.
func ConfigEnv(dir string) ([]string, error) {
	cfg, err := ReadConfig(filepath.Join(dir, ConfigName))
	if err != nil {
		return nil, err
	}
	return cfg.Env, nil
}
