package playback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/jsonpath"
)

// ConfigName is the file beside tapes that holds their ignore rules.
const ConfigName = "tapedeck.json"

// Config is tapedeck.json, kept beside tapes.
type Config struct {
	Ignore []string `json:"ignore"`
}

// ReadConfig reads tapedeck.json at path; a missing file is an empty
// config.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %v (expected {\"ignore\": [\"METHOD:PATH\", …]})", path, err)
	}
	return &c, nil
}

// configBeside is the path of the tapedeck.json that rec is compared
// under ("" for a stored session) and what it holds.
func configBeside(rec *Recording) (string, *Config, error) {
	if rec.TapePath == "" {
		return "", &Config{}, nil
	}
	path := ConfigPath(rec.TapePath)
	cfg, err := ReadConfig(path)
	return path, cfg, err
}

// ConfigPath is the tapedeck.json beside a tape.
func ConfigPath(tapePath string) string {
	return filepath.Join(filepath.Dir(tapePath), ConfigName)
}

// AddIgnores adds rules to the tapedeck.json at path (keeping those it
// has, in order, and adding each new one once).
func AddIgnores(path string, rules []string) error {
	if path == "" {
		return errors.New("--write-config needs a tape: tapedeck.json lives beside it")
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, r := range cfg.Ignore {
		have[r] = true
	}
	for _, r := range rules {
		if !have[r] {
			cfg.Ignore = append(cfg.Ignore, r)
		}
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cfg)
	})
}

// ignoreRules parses rules from flags and config, naming the bad one.
func ignoreRules(flags []string, cfg *Config, cfgPath string) ([]jsonpath.Rule, error) {
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
