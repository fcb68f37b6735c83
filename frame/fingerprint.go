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
	// Manifest is the identity the plugin's manifest declares, nil
	// without one.
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
	// DataDirs are the plugin's data folders inside Root (relative to it)
	// that were left out: a variable of the environment named them. Drift
	// leaves files under them out on both sides.
	DataDirs []string `json:"dataDirs,omitempty"`
	// Locale holds the variables that change how a plugin spells times,
	// numbers and text: TZ, LANG and every LC_* it had (name → value).
	Locale map[string]string `json:"locale,omitempty"`
	// EnvNames are the names (never the values) of the variables the
	// plugin's environment had, less those of the terminal session and of
	// tapedeck itself, sorted: a replay without one of them says so.
	EnvNames []string `json:"envNames,omitempty"`
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

// ManifestID is what the plugin's manifest says the plugin is.
type ManifestID struct {
	ID         string `json:"id,omitempty"`
	Version    string `json:"version,omitempty"`
	APIVersion int    `json:"apiVersion,omitempty"`
}

// Clock is a pinned clock: the plugin's wall clock reads Origin plus the
// recorded time of the last line the host gave it, and its random numbers
// come from Seed, in the recording and in every replay of it.
type Clock struct {
	Origin time.Time `json:"origin"`
	Seed   uint32    `json:"seed"`
	// Unseeded pins the clock only: the plugin's random numbers stay
	// random (a replay's --pin-clock of a recording made without a pin,
	// whose randomness was never seeded). Never stored.
	Unseeded bool `json:"-"`
	// Children: the plugin's own child processes were pinned too (else
	// only the plugin's process is).
	Children bool `json:"children,omitempty"`
	// Missed: no process of the plugin loaded the pin (a launcher that
	// replaced NODE_OPTIONS or PYTHONPATH, or a plugin in neither Node nor
	// Python): the session ran with the real clock.
	Missed bool `json:"missed,omitempty"`
}
