package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/tapedeck/tapedeck/internal/smallfile"
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
	// Browser is the manifest's "browser" section (API 3): the sites the
	// in-app browser may be driven on by browser/*. Nil when there is none.
	Browser *BrowserSection `json:"browser"`
}

// BrowserSection is the "browser" section of a manifest.
type BrowserSection struct {
	Sites []Site `json:"sites"`
}

// Site is one site a plugin may use the in-app browser on: the domain
// host and its aliases, each with its subdomains.
type Site struct {
	Host    string   `json:"host"`
	Aliases []string `json:"aliases"`
}

// sites returns the manifest's browser sites; nil when it names none.
func (m *Manifest) sites() []Site {
	if m == nil || m.Browser == nil {
		return nil
	}
	return m.Browser.Sites
}

// covers reports whether the lower-case host name h is one of the site's
// domains or a subdomain of one, as the host matches them.
func (s Site) covers(h string) bool {
	for _, d := range append([]string{s.Host}, s.Aliases...) {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// names is the site's domains for messages: "x.com (twitter.com)".
func (s Site) names() string {
	if len(s.Aliases) == 0 {
		return s.Host
	}
	return s.Host + " (" + strings.Join(s.Aliases, ", ") + ")"
}

// siteFor returns the site a page address belongs to, as the host decides
// it: an https URL (or http on localhost or 127.0.0.1) whose host is one of
// the sites' domains or below one. why says what is wrong when ok is false.
func siteFor(sites []Site, raw string) (why string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "not an absolute URL", false
	}
	h := strings.ToLower(u.Hostname())
	loopback := h == "localhost" || h == "127.0.0.1"
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https", scheme == "http" && loopback:
	default:
		return "not an https URL (plain http only on localhost)", false
	}
	for _, s := range sites {
		if s.covers(h) {
			return "", true
		}
	}
	return h + " is not on one of the manifest's browser.sites", false
}

// siteNamed reports whether host names one of the sites (its host or an
// alias, not a subdomain), as browser/signIn wants it.
func siteNamed(sites []Site, host string) bool {
	h := strings.ToLower(strings.TrimSpace(host))
	for _, s := range sites {
		if s.Host == h {
			return true
		}
		for _, a := range s.Aliases {
			if a == h {
				return true
			}
		}
	}
	return false
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
	b, err := smallfile.Read(path, smallfile.JSONCap)
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
