package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/redact"
	"github.com/tapedeck/tapedeck/store"
)

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
