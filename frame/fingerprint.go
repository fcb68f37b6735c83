package frame

import "time"

// Fingerprint is what a run's surroundings looked like: the machine, the
// interpreter, the plugin's manifest and the files of its folder. Two of
// them (the recording's and a replay's) say what drifted in between.
type Fingerprint struct {
	OS   string `json:"os"`   // runtime.GOOS of the machine
	Arch string `json:"arch"` // runtime.GOARCH
	// Interpreter is the program that ran the plugin's main (node,
	// python3), nil for a plugin that is its own executable.
	Interpreter *Interpreter `json:"interpreter,omitempty"`
	// Manifest is the identity agentty-plugin.json declares, nil without one.
	Manifest *ManifestID `json:"manifest,omitempty"`
	// Root is the plugin folder whose files were hashed, relative to the
	// session's working directory ("." when it is that folder).
	Root string `json:"root,omitempty"`
	// Files maps each file's path, relative to Root with forward slashes,
	// to the hex SHA-256 of its contents.
	Files map[string]string `json:"files,omitempty"`
	// Capped counts the files left out because the folder held more than
	// the cap; drift compares only the files both sides hashed.
	Capped int `json:"capped,omitempty"`
	// SDK is the version the plugin's vendored SDK declares, "" when none.
	SDK string `json:"sdkVersion,omitempty"`
	// Notes say what could not be taken (an interpreter that would not tell
	// its version, an unreadable file).
	Notes []string `json:"notes,omitempty"`
}

// Interpreter names the program that runs a plugin's main.
type Interpreter struct {
	Name    string `json:"name"`              // as the command spelled it: node, python3
	Path    string `json:"path,omitempty"`    // found the way the command runs
	Version string `json:"version,omitempty"` // from NAME --version: 20.11.1, 3.11.7
}

// ManifestID is what agentty-plugin.json says the plugin is.
type ManifestID struct {
	ID         string `json:"id,omitempty"`
	Version    string `json:"version,omitempty"`
	APIVersion int    `json:"apiVersion,omitempty"`
}

// Clock is a pinned clock: the plugin's wall clock reads Origin plus the
// real time elapsed since it started, and its random numbers come from
// Seed, in the recording and in every replay of it.
type Clock struct {
	Origin time.Time `json:"origin"`
	Seed   uint32    `json:"seed"`
}
