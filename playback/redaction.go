package playback

import (
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

// liveRedaction is how the live frames of replays of a recording
// redacted as d are redacted: under key, this machine's key, or a key
// made for these replays when this machine's is not the recording's. Then
// mask is set: under it a placeholder matches any placeholder, as the
// secrets differ in their HMAC only under the same key. A zero
// liveRedaction redacts nothing (d nil).
type liveRedaction struct {
	d    *frame.Redaction
	key  []byte
	mask func(string) string
}

// redactionFor is the live redaction of replays of a recording redacted
// as d (see machineKey for key and storeDir).
func redactionFor(d *frame.Redaction, key []byte, storeDir string) (liveRedaction, error) {
	if d == nil {
		return liveRedaction{}, nil
	}
	lr := liveRedaction{d: d, key: machineKey(key, storeDir)}
	if lr.key == nil || redact.KeyID(lr.key) != d.KeyID {
		lr.key = make([]byte, 32)
		if _, err := rand.Read(lr.key); err != nil {
			return liveRedaction{}, fmt.Errorf("make a redaction key: %w", err)
		}
		lr.mask = redact.Mask
	}
	if _, err := lr.redactor(); err != nil {
		return liveRedaction{}, err
	}
	return lr, nil
}

// redactor is what redacts one replay's live frames (nil: nothing is
// redacted). A Redactor pairs answers with requests, so each replay has
// its own.
func (lr liveRedaction) redactor() (*redact.Redactor, error) {
	if lr.d == nil {
		return nil, nil
	}
	cfg, err := redact.ConfigFor(lr.d, lr.key)
	if err != nil {
		return nil, fmt.Errorf("the recording's redaction: %w", err)
	}
	red, err := redact.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("the recording's redaction: %w", err)
	}
	return red, nil
}

// redactLive redacts every frame of a live timeline in place, in order (the
// redactor pairs answers with requests), so that nothing tapedeck compares,
// prints or saves shows what the recording redacted.
func redactLive(red *redact.Redactor, live []frame.Frame) {
	for i := range live {
		f := &live[i]
		if !f.IsEvent() {
			f.Raw = red.Line(f.Dir, f.Raw, f.Cut != nil) // raw itself, or bytes of its own
		}
	}
}
