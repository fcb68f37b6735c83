package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
)

// KeyID names a key without giving it away: two sessions whose redaction
// KeyIDs are equal used the same key, so their placeholders of the same
// value are equal.
func KeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tapedeck redaction key id"))
	return hex.EncodeToString(m.Sum(nil))[:12]
}

// Masked stands for any placeholder in text that Mask rewrote.
const Masked = prefix + "…" + suffix

// Mask returns s with every placeholder replaced by Masked, so that text
// redacted under two different keys compares equal where only the secret's
// placeholder differs.
func Mask(s string) string {
	if !strings.Contains(s, prefix) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if n := len(prefix) + 12 + len(suffix); len(s)-i >= n && isPlaceholder([]byte(s[i:i+n])) {
			b.WriteString(Masked)
			s = s[i+n:]
			continue
		}
		b.WriteString(prefix)
		s = s[i+len(prefix):]
	}
}

// Description says what r redacts, for the session's metadata.
func (r *Redactor) Description() *frame.Redaction {
	d := &frame.Redaction{KeyID: KeyID(r.key)}
	for _, ru := range r.rules {
		if ru.dflt {
			d.Defaults = true
		} else {
			d.Rules = append(d.Rules, ru.path.String())
		}
	}
	for _, re := range r.res {
		d.Regexps = append(d.Regexps, re.String())
	}
	return d
}

// Merge adds what b redacts to a (either may be nil). The key stays a's
// when a names one: the placeholders already in the frames are a's, and a
// later pass (an export of a recording redacted as it was made) finds
// those values redacted already.
func Merge(a, b *frame.Redaction) *frame.Redaction {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	m := &frame.Redaction{Defaults: a.Defaults || b.Defaults, KeyID: a.KeyID}
	if m.KeyID == "" {
		m.KeyID = b.KeyID
	}
	m.Rules = union(a.Rules, b.Rules)
	m.Regexps = union(a.Regexps, b.Regexps)
	return m
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ConfigFor rebuilds the Config a session's Redaction describes, with key.
func ConfigFor(d *frame.Redaction, key []byte) (Config, error) {
	cfg := Config{Defaults: d.Defaults, Key: key}
	for _, s := range d.Rules {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return Config{}, fmt.Errorf("redaction rule %q: %w", s, err)
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	for _, s := range d.Regexps {
		re, err := regexp.Compile(s)
		if err != nil {
			return Config{}, fmt.Errorf("redaction regexp %q: %w", s, err)
		}
		cfg.Regexps = append(cfg.Regexps, re)
	}
	return cfg, nil
}
