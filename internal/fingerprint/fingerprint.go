// Package fingerprint owns taking a plugin run's environment fingerprint
// (the machine, the interpreter found the way the command runs and its
// version, the manifest's identity, the SHA-256 of the files in the
// plugin's folder that the plugin could load, never a dotfile, a key or a
// credential, what .gitignore excludes, tapedeck's own files or the
// plugin's data; the vendored SDK's version; TZ and the locale; the names,
// never the values, of the other variables)
// and comparing two of them to say what drifted between a recording and a
// replay. It reads files and runs the interpreter's --version, nothing
// else: it never starts the plugin, and it knows nothing of relays, stores
// or tapes.
package fingerprint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/smallfile"
)

// Defaults of Options.
const (
	DefaultMaxFiles = 3000
	DefaultMaxBytes = 256 << 20
	// versionWait bounds an interpreter's --version.
	versionWait = 3 * time.Second
)

// ManifestName is the plugin manifest's file name.
const ManifestName = "agentty-plugin.json"

// Options says what to fingerprint: a command as it runs.
type Options struct {
	Command []string // argv of the plugin
	Dir     string   // its working directory ("" : ours)
	Env     []string // its environment (nil: ours); PATH finds the interpreter
	// MaxFiles caps the files hashed (0: DefaultMaxFiles); MaxBytes caps
	// the bytes read (0: DefaultMaxBytes).
	MaxFiles int
	MaxBytes int64
	// DataDirs are folders of the plugin's data (a replay's fresh folders),
	// left out beside those a variable of Env names.
	DataDirs []string
}

// Take fingerprints the run of opts.Command in opts.Dir. It blocks while it
// reads the plugin's folder and runs the interpreter's --version (bounded
// by a few seconds); ctx cancels it. What cannot be learnt is said in the
// fingerprint's Notes: the error is only ctx's.
func Take(ctx context.Context, opts Options) (*frame.Fingerprint, error) {
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	dir := opts.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	fp := &frame.Fingerprint{OS: runtime.GOOS, Arch: runtime.GOARCH}
	fp.Locale, fp.EnvNames = environment(opts.Env)
	if len(opts.Command) == 0 {
		return fp, nil
	}
	name := filepath.Base(opts.Command[0])
	main := ""
	if kind := interpreterKind(name); kind != "" {
		in := &frame.Interpreter{Name: name}
		fp.Interpreter = in
		path, err := lookPath(opts.Command[0], dir, opts.Env)
		if err != nil {
			fp.Notes = append(fp.Notes, fmt.Sprintf("%s not found: %v", name, err))
		} else {
			in.Path = path
			v, err := interpreterVersion(ctx, path, dir, opts.Env)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				fp.Notes = append(fp.Notes, fmt.Sprintf("%s --version: %v", name, err))
			}
			in.Version = v
		}
		main = mainArg(kind, opts.Command[1:])
	} else if strings.ContainsRune(opts.Command[0], '/') {
		main = opts.Command[0]
	}
	if main != "" && !filepath.IsAbs(main) {
		main = filepath.Join(dir, main)
	}
	root := findRoot(main, dir)
	only := ""
	if root == "" {
		// No manifest: the main's folder may be anything (/tmp, a bin
		// folder), so only the main itself is hashed.
		if main == "" || !isFile(main) {
			fp.Notes = append(fp.Notes, "no "+ManifestName+" near the main or in the working directory, and no main file: no files hashed")
			return fp, nil
		}
		root, only = filepath.Dir(main), filepath.Base(main)
		fp.Notes = append(fp.Notes, "no "+ManifestName+" near the main or in the working directory: only the main is hashed")
	}
	// Relative to the working directory, so that no absolute path of the
	// recording machine reaches a tape through it.
	fp.Root = root
	if rel, err := filepath.Rel(dir, root); err == nil {
		fp.Root = filepath.ToSlash(rel)
	}
	if only != "" {
		sum, _, err := hashFile(main, opts.MaxBytes)
		if err != nil {
			fp.Notes = append(fp.Notes, fmt.Sprintf("could not read %s: %v", only, err))
		} else {
			fp.Files = map[string]string{only: sum}
		}
		return fp, nil
	}
	fp.Manifest = readManifest(filepath.Join(root, ManifestName))
	skip := newSkipper(root, dir, opts.Env, opts.DataDirs)
	if main != "" {
		skip.main = relTo(root, main)
	}
	if err := hashFiles(ctx, fp, skip, opts.MaxFiles, opts.MaxBytes); err != nil {
		return nil, err
	}
	fp.SDK = sdkVersion(root)
	return fp, nil
}

// interpreterKind says which family of interpreter a program name is:
// "node" (node, nodejs, bun, deno), "python", or "" for anything else, which
// is not asked its version (it may be the plugin itself).
func interpreterKind(name string) string {
	switch {
	case name == "node" || name == "nodejs" || name == "bun" || name == "deno":
		return "node"
	case pythonName.MatchString(name):
		return "python"
	}
	return ""
}

var pythonName = regexp.MustCompile(`^(python|pypy)[0-9.]*$`)

// mainArg is the script an interpreter was given: the first argument that
// is not an option (skipping the value of the options that take one).
func mainArg(kind string, args []string) string {
	takesValue := map[string]bool{"-r": true, "--require": true, "--import": true, "--loader": true, "-X": true, "-W": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-e" || a == "--eval" || a == "-m" || a == "-p" || a == "--print":
			return "" // code on the command line, or a module: no main file
		case takesValue[a]:
			i++
		case a == "run" && kind == "node" && i == 0:
			// deno run / bun run MAIN
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// findRoot is the plugin folder: the nearest folder at or above the main
// file's (three levels at most) that holds a manifest; else the working
// directory when it holds one; else "".
func findRoot(main, dir string) string {
	if main != "" {
		d := filepath.Dir(main)
		for range 4 {
			if isFile(filepath.Join(d, ManifestName)) {
				return d
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	if isFile(filepath.Join(dir, ManifestName)) {
		return dir
	}
	return ""
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// lookPath finds prog the way the command runs: a name with a slash from
// dir, a bare name on env's PATH (ours when env has none).
func lookPath(prog, dir string, env []string) (string, error) {
	if strings.ContainsRune(prog, '/') {
		p := prog
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if !isFile(p) {
			return "", fmt.Errorf("%s: no such file", p)
		}
		return p, nil
	}
	path, ok := getenv(env, "PATH")
	if !ok {
		return exec.LookPath(prog)
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH", prog)
}

// getenv reads key from env, or from ours when env is nil.
func getenv(env []string, key string) (string, bool) {
	if env == nil {
		return os.LookupEnv(key)
	}
	v, ok := "", false
	for _, kv := range env {
		if k, val, found := strings.Cut(kv, "="); found && k == key {
			v, ok = val, true // the last one wins, as for exec
		}
	}
	return v, ok
}

// versionWord finds a version number in an interpreter's --version output.
var versionWord = regexp.MustCompile(`v?([0-9]+\.[0-9]+(\.[0-9]+)?([-+.][0-9A-Za-z.-]+)?)`)

// interpreterVersion runs path --version with the command's environment,
// less what would make the interpreter load more than itself.
func interpreterVersion(ctx context.Context, path, dir string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Dir = dir
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "NODE_OPTIONS" && k != "PYTHONPATH" && k != "PYTHONSTARTUP" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w (%s)", err, strings.TrimSpace(string(firstLine(out))))
	}
	m := versionWord.FindSubmatch(firstLine(out))
	if m == nil {
		return "", fmt.Errorf("no version in %q", firstLine(out))
	}
	return string(m[1]), nil
}

func firstLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return b
}

// readManifest reads the identity a manifest declares; nil when there is
// no manifest or it is not a JSON object.
func readManifest(path string) *frame.ManifestID {
	b, err := smallfile.Read(path, smallfile.JSONCap)
	if err != nil {
		return nil
	}
	var m struct {
		ID         string `json:"id"`
		Version    string `json:"version"`
		APIVersion int    `json:"apiVersion"`
	}
	if json.Unmarshal(b, &m) != nil {
		return &frame.ManifestID{}
	}
	if m.APIVersion == 0 {
		m.APIVersion = 1 // the host's default
	}
	return &frame.ManifestID{ID: m.ID, Version: m.Version, APIVersion: m.APIVersion}
}

// hashFiles hashes every regular file under skip's root but those skip
// leaves out, in lexical order, up to the caps; past them it counts what
// it left out in fp.Capped.
func hashFiles(ctx context.Context, fp *frame.Fingerprint, skip *skipper, maxFiles int, maxBytes int64) error {
	root := skip.root
	fp.Files = map[string]string{}
	var read int64
	capped := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			fp.Notes = append(fp.Notes, fmt.Sprintf("could not read %s: %v", relTo(root, path), err))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if path != root && skip.dir(path, relTo(root, path), d.Name()) {
				if skip.data[filepath.Clean(path)] {
					fp.DataDirs = append(fp.DataDirs, relTo(root, path))
				}
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || skip.file(relTo(root, path), d.Name()) {
			return nil
		}
		if capped {
			fp.Capped++
			return nil
		}
		if len(fp.Files) >= maxFiles || read >= maxBytes {
			capped = true
			fp.Capped++
			return nil
		}
		sum, n, err := hashFile(path, maxBytes-read)
		read += n
		if err != nil {
			fp.Notes = append(fp.Notes, fmt.Sprintf("could not read %s: %v", relTo(root, path), err))
			return nil
		}
		fp.Files[relTo(root, path)] = sum
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fp.Notes = append(fp.Notes, fmt.Sprintf("could not list %s: %v", root, err))
	}
	if fp.Capped > 0 {
		fp.Notes = append(fp.Notes, fmt.Sprintf("the plugin folder has more than %d files or %d MiB: %d files not hashed", maxFiles, maxBytes>>20, fp.Capped))
	}
	if len(fp.Files) == 0 {
		fp.Files = nil
	}
	return nil
}

func relTo(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// hashFile hashes path; a file larger than budget is refused unread.
func hashFile(path string, budget int64) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, budget+1))
	if err != nil {
		return "", n, err
	}
	if n > budget {
		return "", n, fmt.Errorf("larger than what is left of the %d MiB read cap", DefaultMaxBytes>>20)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// sdkVersion is the version a vendored Agentty SDK declares: a
// package.json (in the folder, outside node_modules, or installed as
// node_modules/@agentty/*) whose name names an Agentty SDK, or a Python
// package folder named so whose __init__.py sets __version__.
func sdkVersion(root string) string {
	var found []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			if strings.Count(relTo(root, path), "/") >= 3 {
				return filepath.SkipDir
			}
			return nil
		}
		switch d.Name() {
		case "package.json":
			if path != filepath.Join(root, "package.json") {
				if v := packageSDK(path); v != "" {
					found = append(found, v)
				}
			}
		case "__init__.py":
			if isSDKName(filepath.Base(filepath.Dir(path))) {
				if v := pythonVersion(path); v != "" {
					found = append(found, v)
				}
			}
		}
		return nil
	})
	installed, _ := filepath.Glob(filepath.Join(root, "node_modules", "@agentty", "*", "package.json"))
	sort.Strings(installed)
	for _, p := range installed {
		if v := packageSDK(p); v != "" {
			found = append(found, v)
		}
	}
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

func isSDKName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "agentty") && strings.Contains(n, "sdk") || n == "sdk"
}

func packageSDK(path string) string {
	b, err := smallfile.Read(path, smallfile.JSONCap)
	if err != nil {
		return ""
	}
	var p struct{ Name, Version string }
	if json.Unmarshal(b, &p) != nil || p.Version == "" {
		return ""
	}
	if isSDKName(p.Name) || strings.HasPrefix(p.Name, "@agentty/") || isSDKName(filepath.Base(filepath.Dir(path))) {
		return p.Version
	}
	return ""
}

var pyVersion = regexp.MustCompile(`(?m)^__version__\s*=\s*["']([^"']+)["']`)

func pythonVersion(path string) string {
	b, err := smallfile.Read(path, smallfile.JSONCap)
	if err != nil {
		return ""
	}
	if m := pyVersion.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}
