package cli

// Redaction as the commands ask for it: the --redact flags of record and
// export, the placeholder key, and the redaction of a replay's live frames.

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/jsonpath"
	"github.com/tapedeck/tapedeck/redact"
	"github.com/tapedeck/tapedeck/store"
	"github.com/urfave/cli/v2"
)

// redactFlags are the flags that name what to redact, shared by export and
// record.
func redactFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "redact", Usage: "replace the values at `METHOD:PATH` (e.g. net/fetch:params.headers.Authorization, session/get:result.turns[*].text, storage/set:params..value; repeatable)"},
		&cli.StringSliceFlag{Name: "redact-regex", Usage: "replace text matching `RE` in strings, stderr and non-JSON lines (repeatable)"},
	}
}

// redactor checks the redaction flags of c and builds the redactor they ask
// for (defaults: add the default net/fetch credential rule), or nil when
// nothing is to be redacted or st is nil. The placeholder key is
// $TAPEDECK_REDACT_KEY when set, else the store's own key. Bad flags are
// exit 2; a key that cannot be had, exit 1.
func redactor(c *cli.Context, cmd string, st *store.Store, defaults bool) (*redact.Redactor, error) {
	cfg, err := redactConfig(c, cmd, defaults)
	if err != nil || st == nil || !wantsRedaction(cfg) {
		return nil, err // bad flags, no store to record into, or nothing to redact
	}
	r, err := newRedactor(cfg, st)
	if err != nil {
		return nil, fail(1, "%s: %v", cmd, err)
	}
	return r, nil
}

// redactConfig reads the redaction flags of c, refusing bad ones (exit 2).
func redactConfig(c *cli.Context, cmd string, defaults bool) (redact.Config, error) {
	cfg := redact.Config{Defaults: defaults}
	for _, s := range c.StringSlice("redact") {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return cfg, fail(2, "%s: --redact: %v", cmd, err)
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	for _, s := range c.StringSlice("redact-regex") {
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

func wantsRedaction(cfg redact.Config) bool {
	return len(cfg.Rules) > 0 || len(cfg.Regexps) > 0 || cfg.Defaults
}

// newRedactor builds the redactor of cfg with the placeholder key:
// $TAPEDECK_REDACT_KEY when set, else the store's own (made on first use,
// which fails on a read-only or full store).
func newRedactor(cfg redact.Config, st *store.Store) (*redact.Redactor, error) {
	if k := os.Getenv("TAPEDECK_REDACT_KEY"); k != "" {
		cfg.Key = []byte(k)
	} else {
		k, err := st.RedactKey()
		if err != nil {
			return nil, err
		}
		cfg.Key = k
	}
	return redact.New(cfg)
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
			fmt.Fprintf(w, "tapedeck: %s: redacted %s of --redact-regex %s\n", cmd, nounCount(c.N, "match", "matches"), c.Rule)
		default:
			fmt.Fprintf(w, "tapedeck: %s: redacted %s at %s\n", cmd, nounCount(c.N, "value", "values"), c.Rule)
		}
	}
}

// keySource finds this machine's redaction key: $TAPEDECK_REDACT_KEY, else
// the store's key when the store has one. A replay never makes a key.
type keySource struct{ storeDir string }

func (k keySource) key() []byte {
	if v := os.Getenv("TAPEDECK_REDACT_KEY"); v != "" {
		return []byte(v)
	}
	b, err := os.ReadFile(filepath.Join(k.storeDir, store.RedactKeyFile))
	if err != nil || len(b) < 16 {
		return nil
	}
	return b
}

// redactor returns what redacts the live frames of a replay of a recording
// redacted as d (nil: nothing is redacted), and, when this machine's key is
// not the recording's, the mask under which a placeholder matches any
// placeholder: the secrets differ in their HMAC only under the same key.
func (k keySource) redactor(d *frame.Redaction) (*redact.Redactor, func(string) string, error) {
	if d == nil {
		return nil, nil, nil
	}
	key := k.key()
	var mask func(string) string
	if key == nil || redact.KeyID(key) != d.KeyID {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, nil, fmt.Errorf("make a redaction key: %w", err)
		}
		mask = redact.Mask
	}
	cfg, err := redact.ConfigFor(d, key)
	if err != nil {
		return nil, nil, fmt.Errorf("the recording's redaction: %w", err)
	}
	red, err := redact.New(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("the recording's redaction: %w", err)
	}
	return red, mask, nil
}

// redactLive redacts every frame of a live timeline in place, in order (the
// redactor pairs answers with requests), so that nothing tapedeck compares,
// prints or saves shows what the recording redacted.
func redactLive(red *redact.Redactor, live []frame.Frame) {
	for i := range live {
		f := &live[i]
		if !f.IsEvent() {
			f.Raw = bytes.Clone(red.Line(f.Dir, f.Raw, f.Cut != nil))
		}
	}
}
