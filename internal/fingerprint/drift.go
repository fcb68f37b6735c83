package fingerprint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
)

// Drift is what differs between a recording's fingerprint and a replay's.
type Drift struct {
	// Summary is one line for a person: "COSMICA_HOME not set now;
	// main.mjs changed; node 20.11.1 → 22.3.0; TZ Europe/Berlin →
	// America/New_York; 2 files added". Empty when nothing drifted.
	Summary string `json:"summary"`
	// Unset names the variables the recording's environment had that the
	// replay's lacks (names only, never values).
	Unset []string `json:"unsetNow,omitempty"`
	// Changes are the differences other than files, one line each:
	// "node 20.11.1 → 22.3.0", "linux/amd64 → darwin/arm64".
	Changes []string `json:"changes,omitempty"`
	// Files changed, added and removed, relative to the plugin folder.
	Changed []string `json:"filesChanged,omitempty"`
	Added   []string `json:"filesAdded,omitempty"`
	Removed []string `json:"filesRemoved,omitempty"`
	// Notes say what could not be compared (a capped folder).
	Notes []string `json:"notes,omitempty"`
}

// None reports whether nothing drifted.
func (d *Drift) None() bool {
	return d == nil || len(d.Changes) == 0 && len(d.Changed) == 0 && len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Unset) == 0
}

// Compare says what drifted from rec (the recording's fingerprint) to live
// (the replay's). Either may be nil: a recording without a fingerprint has
// nothing to compare, and Compare returns nil. Files a fingerprint leaves
// out by name (tapedeck's own, dotfiles, secrets) are compared on neither
// side, for a fingerprint an older tapedeck took.
func Compare(rec, live *frame.Fingerprint) *Drift {
	if rec == nil || live == nil {
		return nil
	}
	d := &Drift{}
	// Files: only those both sides could hash when either was capped.
	capped := rec.Capped > 0 || live.Capped > 0
	data := append(append([]string(nil), rec.DataDirs...), live.DataDirs...)
	own := func(p string) bool {
		for _, d := range data {
			if strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return ownFile(p)
	}
	for p, sum := range rec.Files {
		if own(p) {
			continue
		}
		switch ls, ok := live.Files[p]; {
		case !ok && !capped:
			d.Removed = append(d.Removed, p)
		case ok && ls != sum:
			d.Changed = append(d.Changed, p)
		}
	}
	if !capped {
		for p := range live.Files {
			if _, ok := rec.Files[p]; !ok && !own(p) {
				d.Added = append(d.Added, p)
			}
		}
	} else {
		d.Notes = append(d.Notes, "a plugin folder was too large to hash whole: added and removed files are not told")
	}
	sort.Strings(d.Changed)
	sort.Strings(d.Added)
	sort.Strings(d.Removed)

	ri, li := rec.Interpreter, live.Interpreter
	switch {
	case ri != nil && li != nil:
		if ri.Name != li.Name {
			d.Changes = append(d.Changes, fmt.Sprintf("%s → %s", spellInterp(ri), spellInterp(li)))
		} else if ri.Version != li.Version {
			d.Changes = append(d.Changes, fmt.Sprintf("%s %s → %s", ri.Name, orNone(ri.Version), orNone(li.Version)))
		} else if ri.Path != li.Path && ri.Path != "" && li.Path != "" {
			d.Changes = append(d.Changes, fmt.Sprintf("%s at %s → %s", ri.Name, ri.Path, li.Path))
		}
	case ri != nil:
		d.Changes = append(d.Changes, fmt.Sprintf("%s → no interpreter", spellInterp(ri)))
	case li != nil:
		d.Changes = append(d.Changes, fmt.Sprintf("no interpreter → %s", spellInterp(li)))
	}
	rm, lm := orEmpty(rec.Manifest), orEmpty(live.Manifest)
	if rm.ID != lm.ID {
		d.Changes = append(d.Changes, fmt.Sprintf("manifest id %s → %s", orNone(rm.ID), orNone(lm.ID)))
	}
	if rm.Version != lm.Version {
		d.Changes = append(d.Changes, fmt.Sprintf("manifest version %s → %s", orNone(rm.Version), orNone(lm.Version)))
	}
	if rm.APIVersion != lm.APIVersion {
		d.Changes = append(d.Changes, fmt.Sprintf("apiVersion %d → %d", rm.APIVersion, lm.APIVersion))
	}
	if rec.SDK != live.SDK {
		d.Changes = append(d.Changes, fmt.Sprintf("SDK %s → %s", orNone(rec.SDK), orNone(live.SDK)))
	}
	if rec.OS != live.OS || rec.Arch != live.Arch {
		d.Changes = append(d.Changes, fmt.Sprintf("%s/%s → %s/%s", rec.OS, rec.Arch, live.OS, live.Arch))
	}
	d.Changes = append(d.Changes, localeChanges(rec, live)...)
	d.Unset = unsetNames(rec, live)
	d.Summary = d.summary()
	return d
}

// summary spells the drift on one line: changed files by name (three at
// most), then the other changes, then counts of added and removed files.
func (d *Drift) summary() string {
	var parts []string
	if n := len(d.Unset); n > 0 {
		names, more := d.Unset, ""
		if n > 5 {
			names, more = names[:5], fmt.Sprintf(" and %d more", n-5)
		}
		parts = append(parts, strings.Join(names, ", ")+more+" not set now (the recording had "+map[bool]string{true: "it", false: "them"}[n == 1]+")")
	}
	if n := len(d.Changed); n > 0 {
		names := d.Changed
		more := ""
		if n > 3 {
			names, more = names[:3], fmt.Sprintf(" and %d more files", n-3)
			if n == 4 {
				more = " and 1 more file"
			}
		}
		verb := " changed"
		parts = append(parts, strings.Join(names, ", ")+more+verb)
	}
	parts = append(parts, d.Changes...)
	if n := len(d.Added); n > 0 {
		parts = append(parts, countFiles(d.Added, "added"))
	}
	if n := len(d.Removed); n > 0 {
		parts = append(parts, countFiles(d.Removed, "removed"))
	}
	return strings.Join(parts, "; ")
}

// localeChanges spells the changes of TZ and the locale: "TZ
// Europe/Berlin → (unset)". A recording that did not take them (an older
// tapedeck) has nothing to compare.
func localeChanges(rec, live *frame.Fingerprint) []string {
	if rec.Locale == nil && rec.EnvNames == nil {
		return nil
	}
	keys := map[string]bool{}
	for k := range rec.Locale {
		keys[k] = true
	}
	for k := range live.Locale {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		r, rok := rec.Locale[k]
		l, lok := live.Locale[k]
		if r != l || rok != lok {
			out = append(out, fmt.Sprintf("%s %s → %s", k, orUnset(r, rok), orUnset(l, lok)))
		}
	}
	return out
}

// unsetNames are the names of rec's variables that live lacks.
func unsetNames(rec, live *frame.Fingerprint) []string {
	have := map[string]bool{}
	for _, k := range live.EnvNames {
		have[k] = true
	}
	var out []string
	for _, k := range rec.EnvNames {
		if !have[k] {
			out = append(out, k)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orUnset(v string, ok bool) string {
	switch {
	case !ok:
		return "(unset)"
	case v == "":
		return `""`
	}
	return v
}

// countFiles names one file, counts more: "notes.txt added", "2 files added".
func countFiles(files []string, verb string) string {
	if len(files) == 1 {
		return files[0] + " " + verb
	}
	return fmt.Sprintf("%d files %s", len(files), verb)
}

func spellInterp(in *frame.Interpreter) string {
	if in.Version == "" {
		return in.Name + " (version unknown)"
	}
	return in.Name + " " + in.Version
}

func orEmpty(m *frame.ManifestID) frame.ManifestID {
	if m == nil {
		return frame.ManifestID{}
	}
	return *m
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Describe spells a fingerprint on one line, for show:
// "linux/amd64 · node 20.11.1 (/usr/bin/node) · hello-node 1.0.0 api 1 ·
// SDK 0.3.1 · 4 files in testdata/plugins/hello-node".
func Describe(fp *frame.Fingerprint) string {
	if fp == nil {
		return ""
	}
	parts := []string{fp.OS + "/" + fp.Arch}
	if in := fp.Interpreter; in != nil {
		s := spellInterp(in)
		if in.Path != "" {
			s += " (" + in.Path + ")"
		}
		parts = append(parts, s)
	}
	if m := fp.Manifest; m != nil && m.ID != "" {
		parts = append(parts, fmt.Sprintf("%s %s api %d", m.ID, orNone(m.Version), m.APIVersion))
	}
	if fp.SDK != "" {
		parts = append(parts, "SDK "+fp.SDK)
	}
	if fp.Root != "" {
		files := fmt.Sprintf("%d files hashed in %s", len(fp.Files), fp.Root)
		if fp.Capped > 0 {
			files += fmt.Sprintf(" (%d more not hashed)", fp.Capped)
		}
		parts = append(parts, files)
	}
	return strings.Join(parts, " · ")
}
