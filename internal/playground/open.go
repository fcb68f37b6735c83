package playground

import (
	"fmt"
	"html/template"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// BrowserCommand is the command that opens a URL in the person's
// browser: $BROWSER (its first entry; %s stands for the URL, which is
// added at the end otherwise), else open on macOS and xdg-open elsewhere.
// getenv reads the environment.
func BrowserCommand(getenv func(string) string) []string {
	if b := getenv("BROWSER"); b != "" {
		first, _, _ := strings.Cut(b, ":")
		if f := strings.Fields(first); len(f) > 0 {
			return f
		}
	}
	if runtime.GOOS == "darwin" {
		return []string{"open"}
	}
	return []string{"xdg-open"}
}

// openPage is the file --open gives the browser: a page that leads it on
// to the playground's URL (the token in it).
var openPage = template.Must(template.New("open").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url={{.}}">
<title>tapedeck play</title>
</head>
<body>
<p><a href="{{.}}">Open tapedeck play</a></p>
</body>
</html>
`))

// writeOpenPage writes, into dir (a folder of this playground's own, that
// only this user may enter), a file only this user may read that leads
// the browser on to pageURL, and says the file's file:// URL. The browser
// is started with that URL rather than pageURL: any user of this machine
// reads a process's command line (/proc/PID/cmdline), and the token would
// give them the playground.
func writeOpenPage(dir, pageURL string) (string, error) {
	path := filepath.Join(dir, "open.html")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write the page that opens the playground: %w", err)
	}
	err = openPage.Execute(f, pageURL)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("write the page that opens the playground %s: %w", path, err)
	}
	return (&url.URL{Scheme: "file", Path: path}).String(), nil
}

// open starts argv with the URL (for %s, or at the end), and waits for
// it in a goroutine that Run waits for a little at its end (a $BROWSER
// that stays until the browser closes is left running).
func (s *server) open(argv []string, url string) error {
	args := append([]string(nil), argv[1:]...)
	put := false
	for i, a := range args {
		if strings.Contains(a, "%s") {
			args[i], put = strings.ReplaceAll(a, "%s", url), true
		}
	}
	if !put {
		args = append(args, url)
	}
	cmd := exec.Command(argv[0], args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	s.openers.Add(1)
	go func() {
		defer s.openers.Done()
		if err := cmd.Wait(); err != nil {
			fmt.Fprintf(s.opt.Log, "tapedeck: %s: %v\n", argv[0], err)
		}
	}()
	return nil
}
