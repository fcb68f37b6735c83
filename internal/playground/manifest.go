package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/smallfile"
	"github.com/tapedeck/tapedeck/internal/wrap"
)

// Command is one command a manifest contributes.
type Command struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// Plugin is what the playground knows of the plugin: its folder and, when
// the folder has one, its manifest.
type Plugin struct {
	Dir string `json:"dir"` // absolute
	// Manifest is the manifest as check reads it (nil: none); NoManifest
	// says why there is none.
	Manifest   *check.Manifest `json:"-"`
	NoManifest string          `json:"noManifest,omitempty"`

	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	APIVersion  int       `json:"apiVersion"`
	Permissions []string  `json:"permissions"`
	Commands    []Command `json:"commands"`
	Panel       bool      `json:"panel"` // the manifest contributes a panel (or there is none)
	// Wrapped says the folder is wrapped (tapedeck wrap): its main is
	// tapedeck's launcher, and the playground runs the original's
	// runtime and main, kept by wrap, instead.
	Wrapped bool `json:"wrapped,omitempty"`
	main    string
	runtime string
}

// manifestFile is the part of agentty-plugin.json the playground reads
// beside what check reads.
type manifestFile struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Main        string `json:"main"`
	Runtime     string `json:"runtime"`
	Contributes struct {
		Panel    json.RawMessage `json:"panel"`
		Commands []Command       `json:"commands"`
	} `json:"contributes"`
}

// ReadPlugin reads the plugin folder dir ("" the current one). A folder
// without a manifest is a plugin without one; a manifest that cannot be
// read is an error.
func ReadPlugin(dir string) (*Plugin, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("plugin folder %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("plugin folder %s: not a folder", dir)
	}
	p := &Plugin{Dir: abs, APIVersion: 1, Panel: true, ID: filepath.Base(abs), Permissions: []string{}, Commands: []Command{}}
	path := filepath.Join(abs, check.ManifestFile)
	b, err := smallfile.Read(path, smallfile.JSONCap)
	if errors.Is(err, fs.ErrNotExist) {
		p.NoManifest = fmt.Sprintf("no %s in %s", check.ManifestFile, abs)
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := check.ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var mf manifestFile
	if err := json.Unmarshal(b, &mf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.Manifest = m
	if mf.ID != "" {
		p.ID = mf.ID
	}
	p.Name, p.Version, p.main, p.runtime = mf.Name, mf.Version, mf.Main, mf.Runtime
	if mf.Main == wrap.LauncherFile {
		if err := p.unwrapped(); err != nil {
			return nil, err
		}
	}
	if m.APIVersion > 0 {
		p.APIVersion = m.APIVersion
	}
	if m.Permissions != nil {
		p.Permissions = m.Permissions
	}
	for _, c := range mf.Contributes.Commands {
		if c.ID != "" {
			p.Commands = append(p.Commands, c)
		}
	}
	p.Panel = len(mf.Contributes.Panel) > 0 && string(mf.Contributes.Panel) != "null"
	return p, nil
}

// unwrapped takes the runtime and main of the original manifest that
// tapedeck wrap keeps: the playground is the host itself, and runs the
// plugin, never the launcher that would record it into the store again
// (and that unwrap takes away). A kept original that is a link is not
// read.
func (p *Plugin) unwrapped() error {
	path := filepath.Join(p.Dir, filepath.FromSlash(wrap.OrigFile))
	fail := func(why string) error {
		return fmt.Errorf("%s: its main is tapedeck's launcher (tapedeck wrap), and %s: run tapedeck unwrap, or give the plugin's command after --", filepath.Join(p.Dir, check.ManifestFile), why)
	}
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return fail(fmt.Sprintf("the original manifest %s cannot be read (%v)", wrap.OrigFile, err))
	case !fi.Mode().IsRegular():
		return fail(fmt.Sprintf("%s is not a file", wrap.OrigFile))
	}
	b, err := smallfile.Read(path, smallfile.JSONCap)
	if err != nil {
		return fail(fmt.Sprintf("the original manifest cannot be read (%v)", err))
	}
	orig, err := wrap.ParseManifest(b)
	if err != nil {
		return fail(fmt.Sprintf("the original manifest cannot be read (%v)", err))
	}
	p.main, p.runtime, p.Wrapped = orig.Main, orig.EffectiveRuntime(), true
	return nil
}

// command is the argv the host would start the plugin with, from its
// manifest's runtime and main, relative to the plugin folder (where it
// runs).
func (p *Plugin) command() ([]string, error) {
	if p.Manifest == nil {
		return nil, fmt.Errorf("%s: give the plugin's command after --: tapedeck play -- COMMAND [ARGS…]", p.NoManifest)
	}
	if p.main == "" {
		return nil, fmt.Errorf("%s has no main: give the plugin's command after --", filepath.Join(p.Dir, check.ManifestFile))
	}
	switch p.runtime {
	case "", "node":
		return []string{"node", p.main}, nil
	case "python":
		return []string{"python3", p.main}, nil
	case "executable":
		return []string{"./" + filepath.ToSlash(filepath.Clean(p.main))}, nil
	}
	return nil, fmt.Errorf("runtime %q runs inside the host, not as a process: the playground cannot start it", p.runtime)
}
