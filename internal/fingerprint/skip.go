package fingerprint

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tapedeck/tapedeck/internal/smallfile"
)

// skipDirs are folders whose files a plugin does not ship as its own code
// or that change on every run: installed packages, version control,
// tapedeck's own (.tapedeck, tapes), byte code, and Go's testdata (what
// the tests read, the golden tapes among it).
var skipDirs = map[string]bool{"node_modules": true, ".git": true, ".tapedeck": true, "__pycache__": true, "tapes": true, "testdata": true}

// secretFile matches the base names of files that hold keys, and
// secretWord those of files named for credentials or tokens (unless they
// are source code: tokenizer.js is code): neither is ever hashed, as a
// SHA-256 of a short secret in a tape header gives the secret away to a
// guess.
var (
	secretFile = regexp.MustCompile(`(?i)(\.(pem|key|p12|pfx|jks|keystore|kdbx|env|asc|gpg|der|crt)$|^id_(rsa|dsa|ecdsa|ed25519)|^(htpasswd|netrc|pgpass)$)`)
	secretWord = regexp.MustCompile(`(?i)(secret|credential|passw|token|apikey|api_key|private|auth)`)
	sourceFile = regexp.MustCompile(`\.([cm]?js|[cm]?ts|jsx|tsx|py|pyi)$`)
)

// skipper says which files of a plugin folder the fingerprint leaves out:
// dotfiles and dot folders (.env, .npmrc, .git), key and credential files,
// what the folder's .gitignore excludes, tapedeck's own files (tapes
// folders, *.jsonl tapes and their .jsonl.new pending changes,
// tapedeck.json), the tests' (*_test.go, go.mod, go.sum, testdata) and
// the plugin's data folders (a folder that a variable
// of its environment names, or one given in Options.DataDirs).
type skipper struct {
	root    string
	data    map[string]bool // absolute, cleaned
	ignores []ignoreRule
	main    string // the main's path relative to root: always hashed
}

func newSkipper(root, dir string, env []string, dataDirs []string) *skipper {
	s := &skipper{root: root, data: map[string]bool{}}
	add := func(p string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if p == root {
			return // the plugin folder itself is no data folder
		}
		if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
			s.data[p] = true
		}
	}
	for _, d := range dataDirs {
		add(d)
	}
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "PWD" || k == "OLDPWD" || strings.ContainsRune(v, os.PathListSeparator) {
			continue
		}
		if strings.ContainsRune(v, '/') || strings.HasSuffix(k, "_HOME") || strings.HasSuffix(k, "_DIR") {
			if fi, err := os.Stat(resolve(dir, v)); err == nil && fi.IsDir() {
				add(v)
			}
		}
	}
	s.ignores = readGitignore(filepath.Join(root, ".gitignore"))
	return s
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// dir reports whether the folder at path (rel to the root) is left out.
func (s *skipper) dir(path, rel, name string) bool {
	if s.main != "" && strings.HasPrefix(s.main, rel+"/") {
		return false // the main is inside: only its own file is kept there
	}
	return skipDirs[name] || strings.HasPrefix(name, ".") || s.data[filepath.Clean(path)] || s.ignored(rel, true)
}

// file reports whether the file rel (base name name) is left out.
func (s *skipper) file(rel, name string) bool {
	switch {
	case rel != "" && rel == s.main:
		return false // what the runtime loads first, even when built and ignored
	case strings.HasPrefix(name, "."), strings.HasSuffix(name, ".pyc"):
		return true
	case name == "tapedeck.json", strings.HasSuffix(name, ".jsonl"), strings.HasSuffix(name, ".jsonl.new"):
		return true
	case strings.HasSuffix(name, "_test.go"), name == "go.mod", name == "go.sum":
		// The test's own files, not the plugin's: a plugin's goldens run
		// from its go test (package tapetest) add the test file and
		// tapedeck's require and replace lines, and every drift line
		// named them.
		return true
	case name == ManifestName:
		return false // the manifest is always the plugin's
	case secretFile.MatchString(name), secretWord.MatchString(name) && !sourceFile.MatchString(name):
		return true
	}
	return s.ignored(rel, false)
}

// ownFile reports whether a path of a fingerprint names a file that the
// rules above leave out by its name alone (a fingerprint taken by an older
// tapedeck may hold it): drift compares neither side's.
func ownFile(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		if skipDirs[p] || strings.HasPrefix(p, ".") {
			return true
		}
	}
	return (&skipper{}).file("", parts[len(parts)-1])
}

// ignoreRule is one pattern of a .gitignore.
type ignoreRule struct {
	re      *regexp.Regexp
	dirOnly bool
	negate  bool
}

// readGitignore reads the patterns of a .gitignore (none when it is
// missing): blank lines and comments skipped, "!" re-includes, a trailing
// "/" matches folders only, a pattern with a "/" elsewhere is anchored to
// the folder, one without matches a name at any depth; *, ? and ** glob.
func readGitignore(p string) []ignoreRule {
	b, err := smallfile.Read(p, smallfile.JSONCap)
	if err != nil {
		return nil
	}
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		expr := globRegexp(line)
		if !anchored {
			expr = `(.*/)?` + expr
		}
		re, err := regexp.Compile(`^` + expr + `(/.*)?$`)
		if err != nil {
			continue
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules
}

func globRegexp(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString(`(.*/)?`)
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(`.*`)
			i++
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// ignored reports whether the .gitignore leaves rel out (the last rule
// that matches decides, as in git).
func (s *skipper) ignored(rel string, isDir bool) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	out := false
	for _, r := range s.ignores {
		m := r.re.FindStringSubmatch(rel)
		if m == nil || r.dirOnly && !isDir && m[len(m)-1] == "" {
			continue // a folder-only rule matches a file only inside it
		}
		out = !r.negate
	}
	return out
}
