package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ManifestFile is the name of a plugin's manifest inside its folder.
const ManifestFile = "agentty-plugin.json"

// Manifest is what the rules need from agentty-plugin.json.
type Manifest struct {
	ID string `json:"id"`
	// APIVersion is the plugin's API version; 0 when the manifest has none
	// (the host then takes 1).
	APIVersion  int      `json:"apiVersion"`
	Permissions []string `json:"permissions"`
}

// ParseManifest parses the bytes of an agentty-plugin.json. Members the
// rules do not use are ignored, as the host ignores unknown ones.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	return &m, nil
}

// ReadManifest reads and parses the manifest file at path. A missing file
// gives an error wrapping fs.ErrNotExist.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// OptionsFor returns the Options for a plugin whose folder (the recorded
// working directory) is dir: its manifest when dir holds one, otherwise
// NoManifest says why there is none. dir "" means unknown.
func OptionsFor(dir string) Options {
	if dir == "" {
		return Options{NoManifest: "the session has no working directory, so no manifest"}
	}
	path := filepath.Join(dir, ManifestFile)
	m, err := ReadManifest(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Options{NoManifest: fmt.Sprintf("no %s in %s", ManifestFile, dir)}
	case err != nil:
		return Options{NoManifest: err.Error()}
	}
	return Options{Manifest: m}
}
