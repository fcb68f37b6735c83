package cli

// Redaction as the commands ask for it: the --redact flags of record and
// export, the placeholder key, and the redaction of a replay's live frames.

import (
	"fmt"
	"io"
	"regexp"

	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/urfave/cli/v2"
)

// redactValues are the flags that name what to redact, shared by export
// and record.
type redactValues struct {
	rules, regexps cli.StringSlice
}

func (v *redactValues) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "redact", Destination: &v.rules, Usage: "replace the values at `METHOD:PATH` (e.g. net/fetch:params.headers.Authorization, session/get:result.turns[*].text, storage/set:params..value; repeatable)"},
		&cli.StringSliceFlag{Name: "redact-regex", Destination: &v.regexps, Usage: "replace text matching `RE` in strings, stderr and non-JSON lines (repeatable)"},
	}
}

// config is the redaction the flags ask for, for command cmd; defaults adds
// the default net/fetch credential rule. Bad flags are exit 2.
func (v *redactValues) config(cmd string, defaults bool) (redact.Config, error) {
	return redactConfig(cmd, v.rules.Value(), v.regexps.Value(), defaults)
}

// redactor builds the redactor cfg asks for, or nil when nothing is to be
// redacted or st is nil. The placeholder key is $TAPEDECK_REDACT_KEY when
// set, else the store's own key. A key that cannot be had is exit 1.
func redactor(cfg redact.Config, key []byte, cmd string, st *store.Store) (*redact.Redactor, error) {
	if st == nil || !cfg.Wanted() {
		return nil, nil // no store to record into, or nothing to redact
	}
	r, err := redact.NewKeyed(cfg, key, st.RedactKey)
	if err != nil {
		return nil, fail(1, "%s: %v", cmd, err)
	}
	return r, nil
}

// redactConfig reads the values of the redaction flags (--redact rules
// and --redact-regex expressions) for command cmd, refusing bad ones (exit
// 2); defaults adds the default net/fetch credential rule.
func redactConfig(cmd string, rules, regexps []string, defaults bool) (redact.Config, error) {
	cfg := redact.Config{Defaults: defaults}
	for _, s := range rules {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return cfg, fail(2, "%s: --redact: %v", cmd, err)
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	for _, s := range regexps {
		re, err := regexp.Compile(s)
		if err != nil {
			return cfg, fail(2, "%s: --redact-regex %q: %v", cmd, s, err)
		}
		if re.MatchString("") {
			return cfg, fail(2, "%s: --redact-regex %q matches the empty string; it would redact nothing useful", cmd, s)
		}
		cfg.Regexps = append(cfg.Regexps, re)
	}
	return cfg, nil
}

// reportRedactions says on w what r redacted: one line per rule, the
// default rule only when it redacted something.
func reportRedactions(w io.Writer, cmd string, r *redact.Redactor) {
	if r == nil {
		return
	}
	for _, c := range r.Counts() {
		switch {
		case c.Default && c.N == 0:
		case c.Default:
			fmt.Fprintf(w, "tapedeck: %s: redacted %d %s (--no-default-redactions keeps them)\n", cmd, c.N, c.Rule)
		case c.Regexp:
			fmt.Fprintf(w, "tapedeck: %s: redacted %s of --redact-regex %s\n", cmd, present.Count(c.N, "match", "matches"), c.Rule)
		default:
			fmt.Fprintf(w, "tapedeck: %s: redacted %s at %s\n", cmd, present.Count(c.N, "value", "values"), c.Rule)
		}
	}
}
