package playback

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/internal/store"
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
// redacted as d are redacted: by d's rules and expressions, read once,
// under this machine's key, or a key made for these replays when this
// machine's is not the recording's. Then mask is set: under it a
// placeholder matches any placeholder, as the secrets differ in their HMAC
// only under the same key. A zero liveRedaction redacts nothing (d nil).
type liveRedaction struct {
	cfg  redact.Config // with its key; zero when nothing is redacted
	mask func(string) string
}

// redactionFor is the live redaction of replays of a recording redacted
// as d (see machineKey for key and storeDir).
func redactionFor(d *frame.Redaction, key []byte, storeDir string) (liveRedaction, error) {
	if d == nil {
		return liveRedaction{}, nil
	}
	var lr liveRedaction
	key = machineKey(key, storeDir)
	if key == nil || redact.KeyID(key) != d.KeyID {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return liveRedaction{}, fmt.Errorf("make a redaction key: %w", err)
		}
		lr.mask = redact.Mask
	}
	var err error
	if lr.cfg, err = redact.ConfigFor(d, key); err != nil {
		return liveRedaction{}, fmt.Errorf("the recording's redaction: %w", err)
	}
	if _, err := lr.redactor(); err != nil {
		return liveRedaction{}, err
	}
	return lr, nil
}

// redactor is what redacts one replay's live frames (nil: nothing is
// redacted). A Redactor pairs answers with requests, so each replay has
// its own; the rules and compiled expressions they share.
func (lr liveRedaction) redactor() (*redact.Redactor, error) {
	if lr.cfg.Key == nil {
		return nil, nil
	}
	red, err := redact.New(lr.cfg)
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
		red.Frame(&live[i]) // raw itself, or bytes of its own
	}
}
