package playback

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

// machineKey is this machine's redaction key: key when given, else the
// key file of the store in storeDir when it has one. A replay never makes
// a key.
func machineKey(key []byte, storeDir string) []byte {
	if len(key) > 0 {
		return key
	}
	if storeDir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(storeDir, store.RedactKeyFile))
	if err != nil || len(b) < 16 {
		return nil
	}
	return b
}

// liveRedactor returns what redacts the live frames of a replay of a
// recording redacted as d (nil: nothing is redacted), and, when this
// machine's key is not the recording's, the mask under which a placeholder
// matches any placeholder: the secrets differ in their HMAC only under the
// same key.
func liveRedactor(d *frame.Redaction, key []byte, storeDir string) (*redact.Redactor, func(string) string, error) {
	if d == nil {
		return nil, nil, nil
	}
	key = machineKey(key, storeDir)
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
