package cli

// Ignore rules: tapedeck.json beside tapes, --ignore, and the narrowest
// rules proposed for what varies between runs.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/jsonpath"
)

// compareFlags say how two recordings are compared, for every command that
// compares (replay, test, shrink, diff); beside names what tapedeck.json is
// read beside.
func compareFlags(beside string) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ignore", Usage: "leave out `METHOD:PATH` when comparing (repeatable; also read from tapedeck.json beside " + beside + ")"},
		&cli.BoolFlag{Name: "strict", Usage: "compare bytes: member order and white space matter"},
		&cli.BoolFlag{Name: "compare-stderr", Usage: "compare the plugin's stderr lines too"},
	}
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
